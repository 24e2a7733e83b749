"""Linking: parsed files into the jobs the cluster runs (``linker.build_project``)."""
