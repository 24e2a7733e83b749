from __future__ import annotations

from recovery_lint.diagnostics import Severity, safe_fix, unsafe_fix
from recovery_lint.edits import replace_scalar
from recovery_lint.jobs import Job
from recovery_lint.rule import Case, Rule

from ._common import manifest_source
from ._ranktable import PATH_KINDS, VOLUME, host_dir, norm, ranktable_volume, without_table

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
    name = "ranktable-hostpath-mismatch"
    phase = "comm-init"
    severity = Severity.ERROR
    fix_availability = "always"
    summary = "The ranktable volume's path is not where Ascend Operator writes this job's rank table"
    what = """
An AscendJob volume named `ranktable` whose `hostPath` or `nfs` path is not
`/user/mindx-dl/ranktable/<namespace>.<job name>`, the namespace being `default` when the manifest
sets none. Trailing and repeated slashes are ignored.
"""
    why = """
Ascend Operator writes each job's rank table to `<namespace>.<job name>/hccl.json` under its shared
directory `/user/mindx-dl/ranktable`. A volume pointing elsewhere gives the container no table, or
the stale table of another job: torch_npu then silently negotiates the HCCL links (the slow setup
the rank table should save on every restart), or fails at communication time with a wrong table.
"""
    example = """
```yaml
metadata:
  name: bert                     # namespace default
...
          - name: ranktable
            hostPath:
              path: /user/mindx-dl/ranktable/bert     # RL312
```
Use instead:
```yaml
              path: /user/mindx-dl/ranktable/default.bert
```
"""
    fix = """
Rewrites the path to `/user/mindx-dl/ranktable/<namespace>.<job name>`, keeping its quoting. Safe
for a `hostPath` volume. Unsafe for an `nfs` volume, whose export may be laid out differently on the
server than the directory the operator sees; check the server path before applying.
"""
    sources = (
        "ascend-operator: pkg/ranktable/utils/util.go and common.go (rankTableRootDir, <namespace>.<name>)",
        "MindCluster docs: 05_configuring_training_recovery, Table 4 (hostPath of the ranktable volume)",
        "mindcluster-deploy samples: pytorch_multinodes_acjob_910b_with_ranktable.yaml",
    )
    cases = (
        Case(
            title="the namespace part is missing: safe fix",
            files={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/bert"))},
            expect=("job.yaml:21:21",),
            fixed={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/default.bert"))},
        ),
        Case(
            title="a quoted path of another job in a namespace",
            files={"job.yaml": _job(_HOST.format(path='"/user/mindx-dl/ranktable/nlp.bert-old"'), "nlp")},
            expect=("job.yaml:22:21",),
            fixed={"job.yaml": _job(_HOST.format(path='"/user/mindx-dl/ranktable/nlp.bert"'), "nlp")},
        ),
        Case(
            title="an nfs volume: unsafe fix",
            files={"job.yaml": _job(_NFS.format(path="/data/ranktable/default.bert"))},
            expect=("job.yaml:22:21",),
            unsafe=True,
            fixed={"job.yaml": _job(_NFS.format(path="/user/mindx-dl/ranktable/default.bert"))},
        ),
        Case(
            title="the nfs fix is not applied without --unsafe-fixes",
            files={"job.yaml": _job(_NFS.format(path="/data/ranktable/default.bert"))},
            expect=("job.yaml:22",),
            fixed={"job.yaml": _job(_NFS.format(path="/data/ranktable/default.bert"))},
        ),
        Case(
            title="the right path, with a trailing slash",
            files={"job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/default.bert/"))},
        ),
        Case(
            title="the right path in a namespace",
            files={"job.yaml": _job(_NFS.format(path="/user/mindx-dl/ranktable/nlp.bert"), "nlp")},
        ),
        Case(
            title="a volume with another name (that is RL315 when it serves the rank table)",
            files={
                "job.yaml": _job(_HOST.format(path="/data/other")).replace(
                    "          - name: ranktable\n            hostPath",
                    "          - name: scratch\n            hostPath",
                )
            },
        ),
        Case(
            title="a Volcano Job: the operator writes no rank table file for it",
            files={
                "job.yaml": _job(_HOST.format(path="/user/mindx-dl/ranktable/bert"))
                .replace("mindxdl.gitee.com/v1", "batch.volcano.sh/v1alpha1")
                .replace("kind: AscendJob", "kind: Job")
            },
        ),
    )

    def check_job(self, job: Job):
        doc = job.manifest
        if doc is None or not doc.is_ascendjob:
            return
        expected = host_dir(doc)
        src = manifest_source(job)
        if expected is None or src is None:
            return
        for pod in doc.pods:
            volume = ranktable_volume(pod)
            if volume is None or volume.kind not in PATH_KINDS or volume.path is None:
                continue
            written = volume.path.value
            if norm(written) == expected:
                continue
            edit = replace_scalar(src, volume.path, expected)
            make = safe_fix if volume.kind == "hostPath" else unsafe_fix
            fix = make(f"Set the {VOLUME} volume path to {expected}", edit)
            message = (
                f"The '{VOLUME}' volume's {volume.kind} path is {written}, but Ascend Operator writes this "
                f"job's rank table to {expected}/hccl.json: the container sees no table, or a stale one "
                f"(when none: {without_table(job)})"
            )
            yield self.report(volume.path.span, message, fix)
