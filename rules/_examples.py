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
