"""RL316: an AscendJob on the host network that does not tell HCCL which address to use."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, unsafe_fix
from recovery_lint.jobs import Job
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._common import env_entries, manifest_source

# HCCL_SOCKET_IFNAME names the interface instead (the doc-linked PyTorch samples use it)
ADDRESS_VARIABLES = ("HCCL_IF_IP", "HCCL_SOCKET_IFNAME")
HOST_IP_FIELDS = [("name", "HCCL_IF_IP"), ("valueFrom", [("fieldRef", [("fieldPath", "status.hostIP")])])]

_HEAD = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: gpt
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
spec:
  replicaSpecs:
"""
_POD = """\
      template:
        spec:
          hostNetwork: true
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "torchrun --nnodes 2 --nproc_per_node 8 /job/code/train.py"]
            env:
            - name: XDL_IP
              valueFrom:
                fieldRef:
                  fieldPath: status.hostIP
"""
_HOST_IP = "            - name: HCCL_IF_IP\n              valueFrom:\n                fieldRef:\n                  fieldPath: status.hostIP\n"
_JOB = _HEAD + "    Master:\n      replicas: 1\n" + _POD + "    Worker:\n      replicas: 1\n" + _POD
_FIXED = (
    _HEAD + "    Master:\n      replicas: 1\n" + _POD + _HOST_IP + "    Worker:\n      replicas: 1\n" + _POD + _HOST_IP
)
# one Pod: every rank on one host, which reaches itself on any of its addresses
_ONE_POD = _HEAD + "    Master:\n      replicas: 1\n" + _POD.replace("--nnodes 2 ", "")


class HostNetworkWithoutHcclIfIp(Rule):
    code = "RL316"
    scorecard = MISCONFIGURED
    name = "host-network-without-hccl-if-ip"
    phase = "comm-init"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    summary = "An AscendJob on the host network does not set HCCL_IF_IP to the node's address"
    premises = ("multi-node",)
    what = """
An AscendJob of more than one Pod whose Pods use `hostNetwork: true` while neither the containers nor the launch
environment of its training (seen up to the training command; a launch script that is not in the
repository could set it, and then nothing is said) set `HCCL_IF_IP` (the docs: "需要在YAML中同步配置环境变量HCCL_IF_IP为
status.hostIP") or `HCCL_SOCKET_IFNAME`, which names the interface instead and which the
official PyTorch samples use. A job of one Pod is not reported: its ranks all run on one host,
which reaches itself on any of its addresses.
"""
    why = """
On the host network a node has many interfaces (management, storage, parameter plane), and HCCL
picks the one its socket connections bind to by itself when it is not told: on one the other nodes
cannot reach, the communication setup waits for HCCL_CONNECT_TIMEOUT and fails, at every start and after every
rescheduling.
"""
    example = """
```yaml
        spec:
          hostNetwork: true          # RL316: no HCCL_IF_IP
          containers:
          - name: ascend
```
Use instead:
```yaml
          containers:
          - name: ascend
            env:
            - name: HCCL_IF_IP
              valueFrom:
                fieldRef:
                  fieldPath: status.hostIP
```
"""
    fix = """
Unsafe: an `HCCL_IF_IP` entry from `status.hostIP` is appended to the `env` of every container of
the Pods on the host network, creating the list when needed (no fix for a flow-style list). Review:
a launch script that selects another address at run time may be the one that is right.
"""
    sources = (
        "MindCluster docs: 06_api/15_yaml_configuration.md, acjob hostNetwork (true：使用HostIP创建Pod。此种情况下，"
        "需要在YAML中同步配置环境变量HCCL_IF_IP为status.hostIP)",
        "mindcluster-deploy samples: resumable-training/fault-tolerance/without-ranktable/pytorch/*/train_start.sh "
        "(HCCL_SOCKET_IFNAME)",
    )
    cases = examples(
        lambda: (
            Case(
                title="host network without HCCL_IF_IP",
                files={"job.yaml": _JOB},
                expect=("job.yaml:14:24",),
                unsafe=True,
                fixed={"job.yaml": _FIXED},
            ),
            Case(title="HCCL_IF_IP from status.hostIP", files={"job.yaml": _FIXED}),
            Case(
                title="the launch script names the interface",
                files={
                    "job.yaml": _JOB.replace(
                        "torchrun --nnodes 2 --nproc_per_node 8 /job/code/train.py", "bash /job/code/train.sh"
                    ),
                    "job/code/train.sh": (
                        "export HCCL_SOCKET_IFNAME=enp189s0f0\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n"
                    ),
                },
                config={"jobs": [{"manifest": "job.yaml", "scripts": ["job/code/train.sh"]}]},
            ),
            Case(
                title="a launch script that is not in the repository may set it",
                files={
                    "job.yaml": _JOB.replace(
                        "torchrun --nnodes 2 --nproc_per_node 8 /job/code/train.py", "bash /job/code/run.sh"
                    )
                },
            ),
            Case(
                title="the Pod network needs no HCCL_IF_IP",
                files={"job.yaml": _JOB.replace("          hostNetwork: true\n", "")},
            ),
            Case(title="one Pod: its ranks all run on one host", files={"job.yaml": _ONE_POD}),
            Case(
                title="a Volcano Job: the docs say nothing of it there",
                files={
                    "job.yaml": _JOB.replace("mindxdl.gitee.com/v1", "batch.volcano.sh/v1alpha1").replace(
                        "kind: AscendJob", "kind: Job"
                    )
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        src = manifest_source(job)
        if doc is None or src is None or not doc.is_ascendjob:
            return
        hosted = [pod for pod in doc.pods if pod.host_network is not None]
        if not hosted or not _training_seen(job) or _address_set(job):
            return  # a launch script that is not in the repository may well set it
        edits = env_entries(src, [c for pod in hosted for c in pod.main_containers], HOST_IP_FIELDS)
        first = hosted[0].host_network
        assert first is not None
        yield self.report(
            first.span,
            "the Pods use the host network, and neither HCCL_IF_IP nor HCCL_SOCKET_IFNAME is set for the training: the "
            "docs ask for HCCL_IF_IP from status.hostIP, or HCCL may bind its connections to another interface",
            unsafe_fix("Add HCCL_IF_IP from status.hostIP to the env", *edits) if edits else None,
        )


def _training_seen(job: Job) -> bool:
    """Whether the repository shows the training command of the job's launches, so that their
    environment is known up to it."""
    return any(
        cmd.judged and (cmd.is_torch_launcher or cmd.launcher in ("python", "msrun"))
        for launch in job.launches
        for cmd in launch.commands
    )


def _address_set(job: Job) -> bool:
    """Whether a container or the launch environment of the training sets the address or interface."""
    doc = job.manifest
    assert doc is not None
    for _, container in doc.containers():
        if any(v.name.value in ADDRESS_VARIABLES for v in container.env):
            return True
    for launch in job.launches:
        if any(launch.may_set(name) for name in ADDRESS_VARIABLES):
            return True
        for cmd in launch.commands:
            if any(cmd.may_set(name) for name in ADDRESS_VARIABLES):
                return True
    return False
