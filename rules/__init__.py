"""The rule catalogue: one module per rule (or small family); the registry imports them all."""
