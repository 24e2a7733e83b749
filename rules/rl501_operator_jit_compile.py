"""RL501: Operators are compiled online at every start; use binary operators (jit_compile=False)."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, safe_fix, unsafe_fix
from recovery_lint.edits import edit, insert_line_after
from recovery_lint.jobs import Job, Project, judged_in, linked_files
from recovery_lint.premises import Withheld, answer
from recovery_lint.rule import Case, Rule, examples
from recovery_lint.sources.python import PyImport, PythonFile

from . import _phases
from ._compile import CACHE, cache_setting, compile_mode_calls

CALL = "set_compile_mode(jit_compile=False)"

_TRAIN = """\
import argparse

import torch
import torch_npu  # noqa: F401


def main():
    model = torch.nn.Linear(8, 8).npu()
    model(torch.randn(2, 8).npu()).sum().backward()


if __name__ == "__main__":
    main()
"""

_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: resnet
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910
    fault-scheduling: "force"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch-npu:2.1.0
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""

_A2JOB = _ACJOB.replace("ascend-910\n", "ascend-910b\n")
_LAUNCH = "torchrun --nproc_per_node 8 train.py\n"
_CANN_8 = "FROM ubuntu:22.04\nRUN ./Ascend-cann-toolkit_8.0.0_linux-aarch64.run --install\n"
_TRAIN_FIXED = _TRAIN.replace(
    "import torch_npu  # noqa: F401\n",
    "import torch_npu  # noqa: F401\ntorch.npu.set_compile_mode(jit_compile=False)\n",
)


class OperatorJitCompile(Rule):
    code = "RL501"
    name = "operator-jit-compile"
    phase = "compile"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    summary = "Operators are compiled online at every start; use binary operators (jit_compile=False)"
    premises = ("pytorch", "npu-entry", "binary-operators")
    also_asks = ("online-compile-default",)
    what = """
A PyTorch training entry (a Python file a training launch runs, that imports `torch_npu` itself
or through the repository modules it imports, followed three imports deep: `train.py` ->
`util/misc.py` -> `util/dist.py` importing `torch_npu` counts) that either

- calls `torch.npu.set_compile_mode(jit_compile=True)` (or `torch_npu.npu.set_compile_mode`)
  unconditionally while the launch environment that runs it does not set `ASCEND_CACHE_PATH`
  (the operator compile cache), or
- never calls `set_compile_mode` on a platform that compiles operators online by default: the
  Atlas training series (`ring-controller.atlas: ascend-910` on the job's manifest, or
  `target.platform = "ascend-910"` in the configuration). On `ascend-910b` (Atlas A2/A3) and
  `ascend-npu` binary operators are already the default; where the platform is not known the
  advice is withheld and the run names `target.platform`. An entry counts as calling it when the
  entry itself, a module of the repository it imports (a setup helper, under any condition) or a
  launch script's `sed -i` into the entry sets the mode.

Both need CANN 8.0.RC2 or later, which the operator binaries and the compile cache come with:
declared (a toolkit package name, a README's version table, `versions.cann`) or following from the
torch_npu releases the job may run (the compatibility table of Ascend/pytorch); a torch 1.5/1.8
model has older CANN and gets nothing. A call behind a condition (`if args.jit_compile: ...`) is the
user's opt-in and is left alone, as is a `jit_compile` given as a variable. Not reported for unit
tests, library modules, MindSpore and TensorFlow jobs.
"""
    why = """
In online-compile mode torch_npu compiles every operator the model uses when the process starts.
After a fault the training processes are started again, so each recovery repeats that
compilation before the first step. With `jit_compile=False` torch_npu uses the precompiled
operator binaries shipped with CANN and skips the compilation; the operator compile cache
(`jit_compile=True` with a shared `ASCEND_CACHE_PATH`) is the alternative that reuses the
results of the first compilation.
"""
    example = """
```python
import torch
import torch_npu    # RL501 on an ascend-910 job: never calls set_compile_mode(jit_compile=False)
```
Use instead:
```python
import torch
import torch_npu
torch.npu.set_compile_mode(jit_compile=False)
```
"""
    fix = """
A missing call is inserted on the line after the module-level `import torch_npu`, in the file's
line endings, as `torch.npu.set_compile_mode(jit_compile=False)` when `torch` is imported before
that line, else as `torch_npu.npu.set_compile_mode(jit_compile=False)`: safe, since the finding
is only made where the platform and CANN are established. An explicit `jit_compile=True` is the
user's choice: the fix rewriting it to `False` is unsafe. No fix when the file has no module-level
torch_npu import to anchor the line to (torch_npu loaded through a helper module: the finding is
at the entry's import of that helper), and none when any launch of the file, in any job, sets
`ASCEND_CACHE_PATH` (the new mode would conflict with that job's compile cache, RL502).
"""
    sources = (
        "Ascend/op-plugin docs: (beta) torch_npu-npu-set_compile_mode (jit_compile default True on Atlas training "
        "series, False on Atlas A2/A3 training series)",
        "MindCluster docs: 05_configuring_training_recovery Tables 7/8 (operator binary; operator compile cache "
        "with ASCEND_CACHE_PATH; CANN 8.0.RC2 or later; mutually exclusive)",
        "seed: recovery-time optimization 5 (binary operators)",
    )
    cases = examples(
        lambda: (
            Case(
                title="torch_npu loaded two modules away, on an Atlas training platform: reported at the "
                "entry's import, no fix",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": _LAUNCH,
                    "train.py": "import torch\nfrom util.misc import setup\n\nsetup()\n",
                    "util/__init__.py": "",
                    "util/misc.py": "from .dist import init\n\n\ndef setup():\n    init()\n",
                    "util/dist.py": "import torch_npu\n\n\ndef init():\n    pass\n",
                    "Dockerfile": _CANN_8,
                },
                expect=("train.py:2:1",),
            ),
            Case(
                title="an entry deep in its own package run as a module: its package's imports resolve from the "
                "folder that holds the package",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "torchrun --nproc_per_node 8 -m pkg.experimental.algo.main\n",
                    "pkg/__init__.py": "",
                    "pkg/experimental/__init__.py": "",
                    "pkg/experimental/algo/__init__.py": "",
                    "pkg/experimental/algo/main.py": "import torch\nfrom pkg.utils.dist import init\n\ninit()\n",
                    "pkg/utils/__init__.py": "",
                    "pkg/utils/dist.py": "import torch_npu\n\n\ndef init():\n    pass\n",
                    "Dockerfile": _CANN_8,
                },
                expect=("pkg/experimental/algo/main.py:2:1",),
            ),
            Case(
                title="the helper that loads torch_npu also sets the compile mode",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": _LAUNCH,
                    "train.py": "import torch\nfrom util.misc import setup\n\nsetup()\n",
                    "util/__init__.py": "",
                    "util/misc.py": "from .dist import init\n\n\ndef setup():\n    init()\n",
                    "util/dist.py": "import torch_npu\n\ntorch_npu.npu.set_compile_mode(jit_compile=False)\n",
                    "Dockerfile": _CANN_8,
                },
            ),
            Case(
                title="an entry a job without advice also runs, with its compile cache: no fix",
                files={
                    "job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\nspec:\n"
                    "  tasks:\n  - name: t\n    replicas: 2\n    template:\n      spec:\n        containers:\n"
                    "        - name: c\n          command: [/bin/bash, -c, torchrun --nproc_per_node 8 /job/code/train.py]\n"
                    "          env: [{name: ASCEND_CACHE_PATH, value: /cache/op}]\n",
                    "scripts/train.sh": "pip install torch==2.1.0 torch-npu==2.1.0.post10\n"
                    "torchrun --nproc_per_node 8 ../train.py\n",
                    "train.py": "import torch\nimport torch_npu\ntorch.npu.set_compile_mode(jit_compile=True)\n",
                },
                config={"target": {"platform": "ascend-910b"}},
                expect=("train.py:3",),
                unsafe=True,
                fixed={"train.py": "import torch\nimport torch_npu\ntorch.npu.set_compile_mode(jit_compile=True)\n"},
            ),
            Case(
                title="an entry a launch script runs, platform unknown: withheld (declare target.platform)",
                files={"train.sh": _LAUNCH, "train.py": _TRAIN, "Dockerfile": _CANN_8},
            ),
            Case(
                title="the platform declared in the configuration: Atlas training series, CANN 8.0.0",
                files={"train.sh": _LAUNCH, "train.py": _TRAIN, "Dockerfile": _CANN_8},
                config={"target": {"platform": "ascend-910"}},
                expect=("train.py:4:1",),
                fixed={"train.py": _TRAIN_FIXED},
            ),
            Case(
                title="a README's inference guide names the inference server's CANN, not the training job's",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": _TRAIN,
                    "README.md": "# Net for PyTorch\n\n## Training environment\n\n| software | version |\n| --- | --- |\n"
                    "| CANN | 8.0.0 |\n\n```bash\n# not a heading\nbash train.sh\n```\n\n# Net inference guide\n\n"
                    "## Inference environment\n\n| software | version |\n| --- | --- |\n| CANN | 6.0.RC1 |\n",
                },
                config={"target": {"platform": "ascend-910"}},
                expect=("train.py:4:1",),
                fixed={"train.py": _TRAIN_FIXED},
            ),
            Case(
                title="ascend-910 with CANN unknown: withheld (declare versions.cann)",
                files={"job.yaml": _ACJOB, "train.sh": "torchrun train.py\n", "train.py": _TRAIN},
            ),
            Case(
                title="ascend-910 job with CANN 8.0.0: safe; torch imported after torch_npu, CRLF",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "torchrun train.py\n",
                    "train.py": "import torch_npu\r\nimport torch\r\n\r\ntorch.ones(1).npu()\r\n",
                    "Dockerfile": _CANN_8,
                },
                expect=("train.py:1",),
                fixed={
                    "train.py": "import torch_npu\r\ntorch_npu.npu.set_compile_mode(jit_compile=False)\r\nimport torch\r\n"
                    "\r\ntorch.ones(1).npu()\r\n"
                },
            ),
            Case(
                title="explicit online compile without the compile cache, even on A2: the user's value, unsafe fix",
                files={
                    "job.yaml": _A2JOB,
                    "train.sh": "export ASCEND_MAX_OP_CACHE_SIZE=-1\ntorchrun train.py\n",
                    "train.py": "import torch\nimport torch_npu\n\ntorch.npu.set_compile_mode(jit_compile=True)  # keep\n",
                    "Dockerfile": _CANN_8,
                },
                expect=("train.py:4:1",),
                unsafe=True,
                fixed={
                    "train.py": "import torch\nimport torch_npu\n\ntorch.npu.set_compile_mode(jit_compile=False)  # keep\n"
                },
            ),
            Case(
                title="an opt-in flag: a call behind a condition is the user's choice",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "torchrun train.py\n",
                    "train.py": "import torch\nimport torch_npu\n\nif args.jit_compile:\n"
                    "    torch.npu.set_compile_mode(jit_compile=True)\n",
                },
            ),
            Case(
                title="process-level recovery restarts processes too: still reported",
                files={
                    "job.yaml": _ACJOB.replace(
                        "spec:\n  replicaSpecs",
                        '  annotations:\n    recover-strategy: "recover"\nspec:\n  replicaSpecs',
                    ),
                    "train.sh": "torchrun train.py\n",
                    "train.py": "import torch_npu\n\nprint(torch_npu.__version__)\n",
                    "Dockerfile": _CANN_8,
                },
                expect=("train.py:1",),
                fixed={
                    "train.py": "import torch_npu\ntorch_npu.npu.set_compile_mode(jit_compile=False)\n\n"
                    "print(torch_npu.__version__)\n"
                },
            ),
            Case(
                title="another job runs the same file with the compile cache: reported without a fix",
                files={
                    "job.yaml": _ACJOB.replace(
                        "            image: pytorch-npu:2.1.0\n",
                        "            image: pytorch-npu:2.1.0\n            env:\n"
                        "            - name: ASCEND_CACHE_PATH\n              value: /shared/op_cache\n",
                    ),
                    "debug/job.yaml": _ACJOB.replace("name: resnet", "name: resnet-debug"),
                    "train.sh": "torchrun train.py\n",
                    "train.py": _TRAIN,
                    "Dockerfile": _CANN_8,
                },
                expect=("train.py:4",),
                unsafe=True,
                fixed={"train.py": _TRAIN},
            ),
            Case(
                title="online compile with the compile cache configured",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "export ASCEND_CACHE_PATH=/shared/op_cache\nexport ASCEND_MAX_OP_CACHE_SIZE=-1\n"
                    "torchrun train.py\n",
                    "train.py": "import torch\nimport torch_npu\n\ntorch.npu.set_compile_mode(jit_compile=True)\n",
                },
            ),
            Case(
                title="ascend-910 default online compile with ASCEND_CACHE_PATH: the compile cache is in use",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "export ASCEND_CACHE_PATH=/shared/op_cache\ntorchrun train.py\n",
                    "train.py": _TRAIN,
                },
            ),
            Case(
                title="A2/A3 (ascend-910b) default to binary operators",
                files={"job.yaml": _A2JOB, "train.sh": "torchrun train.py\n", "train.py": _TRAIN},
            ),
            Case(
                title="binary operators already selected",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": _TRAIN.replace(
                        "import torch_npu  # noqa: F401\n",
                        "import torch_npu  # noqa: F401\nfrom torch_npu.npu import set_compile_mode\n\n"
                        "set_compile_mode(jit_compile=False)\n",
                    ),
                },
            ),
            Case(
                title="a setup module of the repository that the entry imports selects binary operators",
                files={
                    "train.sh": "#!/bin/bash\ncd $(dirname $0)\ntorchrun --nproc_per_node 8 tools/train.py\n",
                    "tools/train.py": _TRAIN.replace(
                        "import torch_npu  # noqa: F401\n",
                        "import torch_npu  # noqa: F401\nfrom npu_setup.runtime import configure\n\nconfigure()\n",
                    ),
                    "npu_setup/runtime.py": "import torch\n\n\ndef configure():\n"
                    "    torch.npu.set_compile_mode(jit_compile=False)\n",
                },
            ),
            Case(
                title="an imported module that sets the mode under a condition: the entry may set it through it",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "torchrun train.py\n",
                    "Dockerfile": _CANN_8,
                    "train.py": _TRAIN.replace(
                        "import argparse\n", "import argparse\nimport npu_setup  # noqa: F401\n"
                    ),
                    "npu_setup.py": "import torch\n\n\ndef configure(args):\n    if args.bin:\n"
                    "        torch.npu.set_compile_mode(jit_compile=False)\n",
                },
            ),
            Case(
                title="the launch script edits the call into the entry before running it",
                files={
                    "job.yaml": _ACJOB,
                    "Dockerfile": _CANN_8,
                    "train.sh": 'sed -i "3itorch.npu.set_compile_mode(jit_compile=False)" train.py\ntorchrun train.py\n',
                    "train.py": _TRAIN,
                },
            ),
            Case(
                title="a torch 1.5/1.8 model (README version table): CANN older than 8.0.RC2, no advice",
                files={
                    "test/train_full_8p.sh": "python3 -m torch.distributed.launch --nproc_per_node 8 ../train.py\n",
                    "train.py": _TRAIN,
                    "README.md": "| Torch_Version | deps |\n| :-: | :-: |\n| PyTorch 1.5 | - |\n| PyTorch 1.8 | - |\n",
                },
                config={"target": {"platform": "ascend-910"}},
            ),
            Case(
                title="a mode from a variable cannot be judged",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": "import os\nimport torch_npu\n\ntorch_npu.npu.set_compile_mode(jit_compile=JIT)\n",
                },
            ),
            Case(
                title="a library module and a unit test are not entries",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": "import model\n",
                    "model.py": "import torch\nimport torch_npu\n\n\ndef build():\n    return torch.nn.Linear(2, 2)\n",
                    "tests/test_model.py": "import unittest\nimport torch_npu\n\nif __name__ == '__main__':\n"
                    "    unittest.main()\n",
                },
            ),
            Case(
                title="CANN known to be older than 8.0.RC2",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": _TRAIN,
                    "Dockerfile": "FROM ubuntu:22.04\nRUN ./Ascend-cann-toolkit_7.0.0_linux-aarch64.run --install\n",
                },
            ),
            Case(
                title="a MindSpore job gets no PyTorch advice",
                files={
                    "job.yaml": _ACJOB.replace("framework: pytorch", "framework: mindspore"),
                    "train.sh": "msrun train.py\n",
                    "train.py": "import mindspore\nimport torch_npu\n",
                },
            ),
        )
    )

    @classmethod
    def phase_status(cls, job: Job) -> tuple[str, str]:
        return _phases.pytorch_only(job) or _phases.compile_mode(job)

    def check_project(self, project: Project):
        # A file several jobs launch is changed for all of them: a fix is only offered when no launch
        # of the file, in any job, configures the compile cache (the new mode would then conflict, RL502).
        cached: set[int] = set()
        for job in [*project.jobs, *project.premise_skipped]:  # also the jobs it gives no advice for
            for file in job.entries:
                if cache_setting(job, file).spans:
                    cached.add(id(file))
        linked = linked_files(project)
        for job in project.jobs:
            ident = job.id if job.manifest else None
            for diagnostic in self._check(job, cached):
                if isinstance(diagnostic, Withheld):
                    yield diagnostic
                elif judged_in(job, diagnostic, linked):
                    yield diagnostic.with_job(ident, job.id)

    def _check(self, job: Job, cached: set[int]):
        if not job.context.pytorch:
            return
        platform = answer(job, "online-compile-default")
        for file in job.entries:
            route = job.npu_routes.get(file.source.path)
            if not file.imports_module("torch_npu") and route is None:
                continue
            cache = cache_setting(job, file)
            calls = compile_mode_calls(file)
            for call, arg in calls:
                if call.conditional or arg is None or arg.value is not True or cache.everywhere:
                    continue
                where = (
                    "no launch script reaches this file, so no operator compile cache is configured"
                    if not cache.launches
                    else f"{CACHE} is not set in the launch environment, so there is no operator compile cache"
                )
                fix = (
                    safe_fix(
                        "Use binary operators (jit_compile=False) instead of the online compile set here",
                        edit(file.source, arg.span.start, arg.span.end, "False"),
                        overrides="jit_compile=True",
                    )
                    if arg.source == "True" and id(file) not in cached
                    else None
                )
                yield self.report(
                    call.span,
                    f"jit_compile=True compiles every operator online when the process starts, and again after every "
                    f"fault; {where}.",
                    fix,
                )
            if calls or cache.everywhere or _imported_setting(job, file) or _edited_at_launch(job, file):
                continue
            if platform.unknown:
                yield self.withhold(job, "online-compile-default", platform.evidence)
                continue
            if not platform.held:
                continue
            if route is not None and not file.imports_module("torch_npu"):
                # torch_npu comes in through a helper the entry imports: no line of the entry is known
                # to run after it, so the call is left to the user (no fix)
                first, modules = route
                yield self.report(
                    first.span,
                    f"this training entry loads torch_npu through {' -> '.join(modules)} and never calls {CALL}: "
                    f"{platform.evidence}, so every operator is compiled online when the process starts, again "
                    f"after every fault. No fix: call it after this import.",
                )
                continue
            anchor = file.top_import("torch_npu") or file.first_top_import("torch_npu")
            span = anchor.span if anchor is not None else file.imports[0].span
            yield self.report(
                span,
                f"this training entry never calls {CALL}: {platform.evidence}, so every operator is "
                f"compiled online when the process starts, again after every fault.",
                _insert_fix(file, anchor, safe=True) if id(file) not in cached else None,
            )


def _insert_fix(file: PythonFile, anchor: PyImport | None, safe: bool):
    if anchor is None or not anchor.top_level:
        return None
    torch = file.top_import("torch")
    if torch is not None and torch.span.start <= anchor.span.start:
        text = f"torch.npu.{CALL}"
    elif file.top_import("torch_npu") is anchor:
        text = f"torch_npu.npu.{CALL}"
    else:
        return None
    make = safe_fix if safe else unsafe_fix
    return make(f"Call {text} after the torch_npu import", insert_line_after(file.source, anchor.span, text))


def _imported_setting(job: Job, file: PythonFile) -> bool:
    """Whether a repository module the entry imports calls set_compile_mode, under any condition (a
    setup helper it calls, an option it reads): the entry may well set the mode through it."""
    return any(compile_mode_calls(module) for module in job.entry_modules.get(file.source.path, ()))


def _edited_at_launch(job: Job, file: PythonFile) -> bool:
    """Whether a launch script of the job edits the compile mode into the entry before running it
    (``sed -i "...itorch.npu.set_compile_mode(jit_compile=False)" main.py``)."""
    for script in job.scripts:
        for cmd in script.commands:
            words = [w.value or w.text for w in cmd.words]
            in_place = words and words[0] == "sed" and any(w.startswith("-i") for w in words[1:])
            if in_place and any("set_compile_mode" in w or "jit_compile" in w for w in words[1:]):
                return True
    return False
