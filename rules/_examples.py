"""Example files several rules use in their cases (a rule's own variants stay in its module)."""

# A resumable (grace) PyTorch Volcano Job on A2 whose container runs /job/code/train.sh.
PYTORCH_VCJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
spec:
  tasks:
  - name: default
    template:
      spec:
        containers:
        - name: train
          image: pytorch-npu:2.1.0
          command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""

# A DeepSpeed entry with blocking torch.save / torch.load checkpoints, its launch and pins (MindIO ACP's stack),
# and the same entry once MindIO ACP saves and loads.
DEEPSPEED_TRAIN = """\
import os

import deepspeed
import torch
import torch_npu  # registers the NPU device

CKPT = "/ckpt/latest.pt"


def save_checkpoint(engine, optimizer, epoch):
    torch.save({"model": engine.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, CKPT)


def main():
    engine, optimizer, _, _ = deepspeed.initialize(model=torch.nn.Linear(4, 4).npu())
    start = 0
    if os.path.exists(CKPT):
        state = torch.load(CKPT, map_location="cpu")
        engine.module.load_state_dict(state["model"])
        start = state["epoch"] + 1
    for epoch in range(start, 10):
        engine.step()
        save_checkpoint(engine, optimizer, epoch)
    torch.save(engine.module.state_dict(), "/out/final.pt")


if __name__ == "__main__":
    main()
"""

DEEPSPEED_TRAIN_ACP = (
    DEEPSPEED_TRAIN.replace("import deepspeed\n", "import deepspeed\nimport mindio_acp\n", 1)
    .replace("    torch.save({", "    mindio_acp.save({")
    .replace("torch.load(CKPT", "mindio_acp.load(CKPT")
)

DEEPSPEED_LAUNCH = "deepspeed --num_nodes 2 --num_gpus 8 train.py\n"
DEEPSPEED_PINS = "torch==2.7.1\ntorch-npu==2.7.1.post2\nmindio-acp==7.3.0\ndeepspeed==0.16.4\n"

MINDSPEED_ENTRY = """\
import torch
from mindspeed_llm import megatron_adaptor
from megatron.training import pretrain


if __name__ == "__main__":
    pretrain()
"""
MINDSPEED_PINS = "torch==2.7.1\nmindspeed-llm==2.3.0\nmindio-acp==7.3.0\n"
