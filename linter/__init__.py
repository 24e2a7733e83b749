"""recovery-lint: a static linter for recovery-time optimizations of PyTorch training jobs on
Ascend NPU clusters (MindX DL / mind-cluster, torch_npu, CANN, MindIO)."""

__version__ = "0.1.0"
