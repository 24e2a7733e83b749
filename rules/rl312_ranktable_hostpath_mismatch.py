"""RL312: The ranktable volume's path is not where Ascend Operator writes this job's rank table."""

from __future__ import annotations

import posixpath

from recovery_lint.diagnostics import Severity, safe_fix, unsafe_fix
from recovery_lint.edits import replace_scalar
from recovery_lint.jobs import Job
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._common import manifest_source
from ._ranktable import (
    PATH_KINDS,
    VOLUME,
    host_root,
    job_dir_name,
    norm,
    table_volume,
    without_table,
)

_JOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: bert
{namespace}  labels:
    framework: pytorch
spec:
  replicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: ascend
            volumeMounts:
            - name: ranktable
              mountPath: /user/serverid/devindex/config
          volumes:
          - name: ranktable
{volume}"""
_HOST = """\
            hostPath:
              path: {path}  # shared with Ascend Operator
              type: Directory
"""
_NFS = """\
            nfs:
              server: 192.0.2.10
              path: {path}
"""


def _job(volume: str, namespace: str = "") -> str:
    return _JOB.format(volume=volume, namespace=f"  namespace: {namespace}\n" if namespace else "")


class RankTableHostPathMismatch(Rule):
    code = "RL312"
    scorecard = MISCONFIGURED
    name = "ranktable-hostpath-mismatch"
    phase = "comm-init"
    severity = Severity.ERROR
    fix_availability = "sometimes"
    summary = "The ranktable volume's path is not where Ascend Operator writes this job's rank table"
    what = """
A volume named `ranktable` of a workload whose rank table Ascend Operator writes (an AscendJob,
or a Volcano Job, Deployment or StatefulSet labelled `ring-controller.atlas` or with that volume) whose `hostPath` or `nfs` path is not the directory where
Ascend Operator writes this job's rank table: `<root>/<namespace>.<job name>`. `<root>` is a setting
of the operator's deployment (`/user/mindx-dl/ranktable` by default; set `ranktable-host-root` in
the configuration when yours differs). Without it configured, only the `<namespace>.<job name>`
part is judged. A manifest without `metadata.namespace` gets its namespace from `kubectl -n`, so
only the job-name part is judged then. Trailing and repeated slashes are ignored.
"""
    why = """
Ascend Operator writes each job's rank table to `<namespace>.<job name>/hccl.json` under its shared
directory. A volume pointing elsewhere gives the container no table, or the stale table of another
job: torch_npu then silently negotiates the HCCL links (the slow setup the rank table should save
on every restart), or fails at communication time with a wrong table.
"""
    example = """
```yaml
metadata:
  name: bert
  namespace: nlp
...
          - name: ranktable
            hostPath:
              path: /user/mindx-dl/ranktable/bert     # RL312
```
Use instead:
```yaml
              path: /user/mindx-dl/ranktable/nlp.bert
```
"""
    fix = """
Rewrites the path to `<root>/<namespace>.<job name>`, keeping its quoting. Safe only when nothing
is assumed: a `hostPath` volume, the namespace in the manifest and `ranktable-host-root`
configured. Unsafe when the operator's default directory is assumed, and for an `nfs` volume, whose
export may be laid out differently on the server than the directory the operator sees. No fix when
the manifest sets no namespace.
"""
    sources = (
        "ascend-operator: pkg/ranktable/plugins.go ShouldGenerateRankTable (AscendJob; Volcano Job, Deployment and "
        "StatefulSet with the ring-controller.atlas label or a ranktable volume)",
        "ascend-operator: pkg/ranktable/utils/util.go and common.go (rankTableRootDir, <namespace>.<name>)",
        "MindCluster docs: 05_developer_guide, Ascend Operator installation (the rank-table directory mounted "
        "into the operator is part of its deployment)",
        "MindCluster docs: 05_configuring_training_recovery, Table 4 (hostPath of the ranktable volume)",
        "mindcluster-deploy samples: pytorch_multinodes_acjob_910b_with_ranktable.yaml",
    )
    cases = examples(
        lambda: (
            Case(
                title="the namespace part is missing, the host root configured: safe fix",
                files={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/bert"), "nlp")},
                config={"ranktable-host-root": "/user/mindx-dl/ranktable"},
                expect=("job.yaml:22:21",),
                fixed={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/nlp.bert"), "nlp")},
            ),
            Case(
                title="another job's directory, the default host root assumed: unsafe fix",
                files={"job.yaml": _job(_HOST.format(path='"/user/mindx-dl/ranktable/nlp.bert-old"'), "nlp")},
                expect=("job.yaml:22:21",),
                unsafe=True,
                fixed={"job.yaml": _job(_HOST.format(path='"/user/mindx-dl/ranktable/nlp.bert"'), "nlp")},
            ),
            Case(
                title="the default fix is not applied without --unsafe-fixes",
                files={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/bert"), "nlp")},
                expect=("job.yaml:22",),
                fixed={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/bert"), "nlp")},
            ),
            Case(
                title="an nfs volume: unsafe even with the root configured",
                files={"job.yaml": _job(_NFS.format(path="/data/ranktable/nlp.bert"), "nlp")},
                config={"ranktable-host-root": "/user/mindx-dl/ranktable"},
                expect=("job.yaml:23:21",),
                unsafe=True,
                fixed={"job.yaml": _job(_NFS.format(path="/user/mindx-dl/ranktable/nlp.bert"), "nlp")},
            ),
            Case(
                title="a configured root that is not the default",
                files={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/nlp.bert"), "nlp")},
                config={"ranktable-host-root": "/data/rt/"},
                expect=("job.yaml:22",),
                fixed={"job.yaml": _job(_HOST.format(path="/data/rt/nlp.bert"), "nlp")},
            ),
            Case(
                title="the right directory under a root that is not configured: not judged",
                files={"job.yaml": _job(_HOST.format(path="/data/rt/nlp.bert"), "nlp")},
            ),
            Case(
                title="no namespace in the manifest: the job-name part is judged, without a fix",
                files={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/bert"))},
                expect=("job.yaml:21",),
                unsafe=True,
                fixed={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/bert"))},
            ),
            Case(
                title="no namespace in the manifest: any namespace with this job's name",
                files={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/team-a.bert"))},
            ),
            Case(
                title="the right path, with a trailing slash",
                files={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/default.bert/"), "default")},
            ),
            Case(
                title="a volume with another name (that is RL315 when it serves the rank table)",
                files={
                    "job.yaml": _job(_HOST.format(path="/data/other"), "nlp").replace(
                        "          - name: ranktable\n            hostPath",
                        "          - name: scratch\n            hostPath",
                    )
                },
            ),
            Case(
                title="a Volcano Job with a ranktable volume: Ascend Operator writes its table too",
                files={
                    "job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/bert"), "nlp")
                    .replace("mindxdl.gitee.com/v1", "batch.volcano.sh/v1alpha1")
                    .replace("kind: AscendJob", "kind: Job")
                },
                expect=("job.yaml:22:21",),
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        src = manifest_source(job)
        if doc is None or src is None or not doc.rank_table_written or not doc.job_name:
            return
        root, configured = host_root(job)
        name = job_dir_name(doc)
        for pod in doc.pods:
            # also a misnamed volume in the operator's directory (RL315 renames it): its path is judged as well
            volume = table_volume(pod)
            if volume is None or volume.kind not in PATH_KINDS or volume.path is None:
                continue
            written = norm(volume.path.value)
            last = posixpath.basename(written)
            if name is None:
                # the namespace comes from `kubectl -n`: only the job-name part can be judged
                if last.endswith(f".{doc.job_name}"):
                    continue
                yield self.report(
                    volume.path.span,
                    f"The rank table volume's {volume.kind} path is {volume.path.value}, but Ascend Operator "
                    f"writes this job's rank table to <namespace>.{doc.job_name}/hccl.json under its directory: "
                    f"the container sees no table, or a stale one. The manifest sets no namespace (kubectl -n "
                    "decides it), so no fix is offered",
                )
                continue
            expected = f"{root}/{name}"
            if written == expected or (not configured and last == name):
                continue  # without a configured root only the <namespace>.<name> part is known
            assumed = "" if configured else f" (assuming the operator's default directory {root})"
            message = (
                f"The rank table volume's {volume.kind} path is {volume.path.value}, but Ascend Operator writes "
                f"this job's rank table to {expected}/hccl.json{assumed}: the container sees no table, or a stale "
                f"one (when none: {without_table(job)})"
            )
            safe = configured and volume.kind == "hostPath"
            make = safe_fix if safe else unsafe_fix
            fix = make(f"Set the {VOLUME} volume path to {expected}", replace_scalar(src, volume.path, expected))
            yield self.report(volume.path.span, message, fix)
