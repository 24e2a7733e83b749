"""Manifests several test modules share."""

# An AscendJob of two Pods with process-level recovery declared: its launch script must keep the
# HCCL watchdog off (RL102), so RL101 stays silent on it.
PROCESS_RECOVERY_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: llm-pretrain
  namespace: training
  labels:
    ring-controller.atlas: ascend-910b
    framework: pytorch
    fault-scheduling: "grace"
    pod-rescheduling: "on"
    process-recover-enable: "on"
    fault-retry-times: "10"
  annotations:
    recover-strategy: "recover"
spec:
  runPolicy:
    backoffLimit: 100
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: registry.example.com/pytorch-npu:24.0
            command: ["/bin/bash", "-c", "bash scripts/train.sh"]
            env:
            - name: POD_IP
              valueFrom:
                fieldRef:
                  fieldPath: status.podIP
            - name: TTP_PORT
              value: "8000"
            ports:
            - containerPort: 9601
              name: taskd-port
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: registry.example.com/pytorch-npu:24.0
            command: ["/bin/bash", "-c", "bash scripts/train.sh"]
            env:
            - name: POD_IP
              valueFrom:
                fieldRef:
                  fieldPath: status.podIP
            - name: TTP_PORT
              value: "8000"
            ports:
            - containerPort: 9601
              name: taskd-port
"""
