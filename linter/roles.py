"""What a job or a file is for, decided from what a static reader can see, with the evidence.

Recovery advice is for training that a cluster runs: a manifest's training job, a launch script that
starts a distributed (or multi-device) training, the Python entry it runs. Evaluation, inference,
serving, conversion, data preparation, benchmarks, CI and unit tests, library modules and vendored
third-party code get none. The order of the checks follows what proved reliable on real Ascend
repositories: process launch, framework, serving, vendored, not-a-training-task by path, entry and
flags, training evidence, CI, performance runs, then training.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from .lazyre import LazyPattern

TRAINING = "training"


@dataclass
class Verdict:
    """What a file or launch is for (training, evaluation, tests, ...) and the evidence for it."""

    role: str  # training | evaluation | inference | conversion | data | benchmark | ci | test | library |
    #            vendored | single-process | mindspore | no-launch | unknown
    reason: str  # the evidence, for --show-jobs and the JSON report

    @property
    def judged(self) -> bool:
        """Whether recovery advice applies."""
        return self.role == TRAINING


_TOKEN = LazyPattern(r"[a-z]+|\d+")

INFERENCE = frozenset(
    {
        "infer",
        "inference",
        "predict",
        "prediction",
        "serve",
        "serving",
        "server",
        "mindie",
        "vllm",
        "generate",
        "generation",
        "gradio",
        "streamlit",
        "webui",
        "demo",
        "chat",
        "deploy",
    }
)
# words of INFERENCE that name folders of every kind of manifest (deploy/job.yaml trains as often as it serves)
GENERIC_FOLDER_WORDS = frozenset({"deploy", "demo"})
EVALUATION = frozenset({"eval", "evaluate", "evaluation", "evaluator", "val", "validate", "validation", "bleu", "test"})
CONVERSION = frozenset({"convert", "conversion", "converter", "export", "onnx", "pth2onnx", "pthtar2onnx", "publish"})
DATA = frozenset(
    {"preprocess", "preprocessing", "prepare", "download", "tokenize", "tokenizer", "dataprep", "extract", "extraction"}
)
BENCHMARK = frozenset({"perf", "performance", "benchmark", "benchmarks", "bench", "profiling", "profile"})
BENCHMARK_FOLDERS = frozenset({"benchmark", "benchmarks", "perf", "performance"})
TRAIN_WORDS = frozenset(
    {
        "train",
        "training",
        "pretrain",
        "posttrain",
        "finetune",
        "finetuning",
        "tune",
        "sft",
        "dpo",
        "ppo",
        "grpo",
        "rlhf",
    }
)
VENDORED_DIRS = frozenset(
    {
        "third_party",
        "thirdparty",
        "3rdparty",
        "third-party",
        "vendor",
        "vendored",
        "external",
        "externals",
        "site-packages",
    }
)
TEST_DIRS = frozenset({"tests", "test", "unittest", "unittests", "ut", "st"})
# test suites of a repository (plural `tests/`: a model zoo's `test/` folder holds its real launch scripts)
CI_PATHS = ("tests/", "/data/ci/", ".ci/", "ci/")
TRAINING_FLAGS = frozenset(
    {
        "--train-iters",
        "--train_iters",
        "--epochs",
        "--epoch",
        "--num_train_epochs",
        "--num-train-epochs",
        "--max_steps",
        "--max-steps",
        "--do_train",
        "--save-interval",
        "--save_interval",
        "--save",
        "--train_epochs",
        "--train-epochs",
    }
)


def tokens(name: str) -> set[str]:
    """Words of a file or folder name: ``train_full_8p.sh`` -> {train, full, 8, p, sh}."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return set(_TOKEN.findall(spaced.lower()))


def _stem(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[0]


def vendored(path: str) -> str | None:
    """Why ``path`` is third-party code copied into the repository, or None."""
    parts = path.split("/")[:-1]
    for part in parts:
        if part.lower() in VENDORED_DIRS:
            return f"under {part}/ (third-party code)"
    lowered = "/".join(parts).lower()
    for marker in ("examples/legacy", "research_projects", "egs/", "egs2/"):
        if marker.rstrip("/") in lowered.split("/") or marker in lowered + "/":
            return f"under {marker.rstrip('/')}/ (copied upstream recipes)"
    return None


def ci_path(path: str) -> str | None:
    lowered = "/" + path.lower()
    for marker in CI_PATHS:
        if "/" + marker in lowered:
            return f"under {marker.strip('/')}/ (CI and system tests)"
    for part in lowered.split("/")[1:-1]:
        if _suite_folder(part):
            return f"under {part}/ (a test suite)"
    return None


def _suite_folder(name: str) -> bool:
    """A test suite's folder named with the plural ``tests`` and a qualifier: MindSpeed's
    ``tests_extend/``, ``system_tests/``, ``model_tests/``, MindSpeed-RL's ``verl_tests/``."""
    return name.startswith(("tests_", "tests-")) or name.endswith(("_tests", "-tests"))


def _negative_name(words: set[str], what: str) -> Verdict | None:
    """A name that says the task is not training (its ``train`` word, if any, loses to these)."""
    for role, vocabulary in (
        ("inference", INFERENCE),
        ("evaluation", EVALUATION),
        ("conversion", CONVERSION),
        ("data", DATA),
    ):
        hit = sorted(words & vocabulary)
        if hit and not (role == "evaluation" and words & TRAIN_WORDS):
            return Verdict(role, f"{what} says {hit[0]!r}")
    return None


def _benchmark_name(words: set[str], what: str) -> Verdict | None:
    hit = sorted(words & BENCHMARK)
    if hit and "full" not in words:
        return Verdict("benchmark", f"{what} says {hit[0]!r} (a short performance run)")
    return None


def starting_script_verdict(path: str) -> Verdict | None:
    """What the name of the script a standalone job starts from says, where its launch is written in
    a script it calls (``test/train_performance_multinodes.sh`` running ``dist_train.sh``): a
    performance, evaluation or inference run is one whichever helper holds the launcher."""
    words = tokens(_stem(path))
    what = f"the job's script {posixpath.basename(path)}"
    return _negative_name(words, what) or _benchmark_name(words, what)


@dataclass
class LaunchFacts:
    """What the linker saw of one launch command."""

    script: str  # the file the command is written in (a script or a manifest)
    launcher: str  # torchrun | torch.distributed.run | … | python | msrun | deepspeed
    arguments: tuple[str, ...]  # static words after the launcher (dynamic ones as written)
    entry: str | None  # the entry's repository path when resolved, else as written
    entry_imports: frozenset[str]  # top-level modules the entry imports (empty when not read)
    entry_test: bool  # the entry is a unit test (unittest/pytest)
    multi: bool  # more than one process
    single: bool  # known to be one process on one device
    scale: str  # evidence for the process count
    in_manifest: bool
    entry_on_cuda: bool = False  # the entry puts its work on CUDA devices and nothing on an NPU
    devices: str | None = None  # what the launch is given: "npu" (ASCEND_RT_VISIBLE_DEVICES, HCCL_*,
    # device=npu), "cuda" (CUDA_VISIBLE_DEVICES and nothing of an NPU), or None


def launch_verdict(facts: LaunchFacts) -> Verdict:
    """Is this launch a training that needs recovery advice?"""
    if facts.launcher == "msrun" or "mindspore" in facts.entry_imports:
        return Verdict("mindspore", "a MindSpore launch (msrun or an entry importing mindspore)")
    args = set(facts.arguments)
    if "--device_target" in args or any(a.startswith("--device_target=") for a in facts.arguments):
        return Verdict("mindspore", "a MindSpore launch (--device_target)")
    script_words = tokens(_stem(facts.script)) if not facts.in_manifest else set()
    entry_words = tokens(_stem(facts.entry)) if facts.entry else set()
    serving = {"vllm", "gradio", "streamlit", "uvicorn"} & (entry_words | set(facts.entry_imports))
    if serving:
        return Verdict("inference", f"serves a model ({sorted(serving)[0]})")
    if not facts.in_manifest:
        why = vendored(facts.script)
        if why:
            return Verdict("vendored", f"the script is {why}")
    if facts.entry:
        why = vendored(facts.entry)
        if why:
            return Verdict("vendored", f"the entry is {why}")
        found = _negative_name(entry_words, f"the entry {posixpath.basename(facts.entry)}")
        if found:
            return found
    if facts.entry_test:
        return Verdict("test", "the entry is a unit test")
    if facts.entry_on_cuda and facts.devices != "npu":
        return Verdict("cuda", "the entry puts its work on CUDA devices, nothing on an NPU (upstream code)")
    if facts.devices == "cuda":
        return Verdict("cuda", "the launch is given CUDA_VISIBLE_DEVICES and nothing of an NPU")
    if ("--do_eval" in args or "--do_predict" in args) and "--do_train" not in args:
        return Verdict("evaluation", "--do_eval without --do_train")
    if any(a.startswith(("--task-data-path", "--task_data_path")) for a in facts.arguments):
        return Verdict("evaluation", "--task-data-path (an evaluation task)")
    if script_words:
        found = _negative_name(script_words, f"the script name {posixpath.basename(facts.script)}")
        if found and not (entry_words & TRAIN_WORDS):
            return found
    if not facts.in_manifest:
        why = ci_path(facts.script)
        if why:
            return Verdict("ci", f"the script is {why}")
        if any(a.startswith("/data/ci") for a in facts.arguments):
            return Verdict("ci", "reads CI data under /data/ci")
        found = _benchmark_name(script_words, f"the script name {posixpath.basename(facts.script)}")
        if found:
            return found
    for path in (facts.script, facts.entry or ""):
        folders = {part.lower() for part in path.split("/")[:-1]}
        if folders & BENCHMARK_FOLDERS:
            return Verdict("benchmark", f"{path} is in a benchmark folder (short performance runs)")
        if path and not (facts.in_manifest and path == facts.script):
            found = role_by_folder(path)
            if found is not None:
                return Verdict(found.role, f"{path}: {found.reason}")
    if facts.single:
        return Verdict("single-process", f"one process on one device ({facts.scale})")
    if not facts.multi and facts.launcher == "python" and not facts.in_manifest:
        return Verdict("single-process", f"no distributed launcher, device loop or device count > 1 ({facts.scale})")
    evidence = _training_evidence(facts, script_words, entry_words, args)
    return Verdict(TRAINING, evidence)


def _training_evidence(facts: LaunchFacts, script_words: set[str], entry_words: set[str], args: set[str]) -> str:
    launched = "a manifest's container" if facts.in_manifest else f"{posixpath.basename(facts.script)}"
    parts = [f"{launched} runs {facts.launcher}"]
    if facts.multi:
        parts.append(f"over several devices ({facts.scale})")
    flags = sorted(args & TRAINING_FLAGS)
    if flags:
        parts.append(f"with {flags[0]}")
    elif entry_words & TRAIN_WORDS or script_words & TRAIN_WORDS:
        parts.append("with a training name")
    return " ".join(parts)


# -- Python files ------------------------------------------------------------------------------
def python_path_verdict(path: str) -> Verdict | None:
    """A Python file that is not training by where it lives or what it is called, or None."""
    name = posixpath.basename(path)
    why = vendored(path)
    if why:
        return Verdict("vendored", f"{why}")
    stem = _stem(path)
    if stem.startswith("test_") or stem.endswith("_test") or stem == "conftest":
        return Verdict("test", f"{name} is a test module")
    folders = {p.lower() for p in path.split("/")[:-1]}
    if folders & {"tests", "unittest", "unittests"}:
        return Verdict("test", "under a tests/ folder")
    if folders & BENCHMARK_FOLDERS:
        return Verdict("benchmark", "in a benchmark folder (short performance runs)")
    why = ci_path(path)
    if why:
        return Verdict("ci", why)
    return _negative_name(tokens(stem), f"the name {name}")


def role_by_name(path: str) -> Verdict | None:
    """What a file is for when its name or folders say it is not training (inference, evaluation,
    conversion, data preparation, a benchmark), or None."""
    name = posixpath.basename(path)
    words = tokens(_stem(path))
    found = _negative_name(words, f"the name {name}") or _benchmark_name(words, f"the name {name}")
    return found or role_by_folder(path)


def role_by_folder(path: str) -> Verdict | None:
    """An inference or serving folder (``infer/``, ``serving/``), or None."""
    folder_words: set[str] = set()
    for part in path.split("/")[:-1]:
        folder_words |= tokens(part)
    hit = sorted(folder_words & INFERENCE - GENERIC_FOLDER_WORDS)
    if hit and not folder_words & TRAIN_WORDS:
        return Verdict("inference", f"its folder says {hit[0]!r}")
    return None


STANDALONE_NAMES = frozenset({"train", "pretrain", "posttrain", "finetune", "sft", "main"})


def standalone_name(path: str) -> bool:
    """A Python file whose name says it is a training entry of its own (``train.py``, ``main.py``)."""
    return bool(tokens(_stem(path)) & STANDALONE_NAMES)


def standalone_entry_verdict(
    path: str, runnable: bool, imports: frozenset[str], trains: str | None, on_npu: bool = True
) -> Verdict:
    """A Python file no launch reaches: training only when it is a runnable entry with a training
    name and a training loop (it is then started by something this repository does not show), and
    ``on_npu``: it puts its work on an NPU."""
    if "mindspore" in imports:
        return Verdict("mindspore", "imports mindspore")
    found = python_path_verdict(path)
    if found is not None:
        return found
    if not runnable:
        return Verdict("library", "nothing runs when it is executed (a module other code imports)")
    if not standalone_name(path):
        return Verdict("unknown", "no launch script runs it and its name does not say training")
    if trains is None:
        return Verdict("unknown", "no launch script runs it and no training loop was found in it")
    if not on_npu:
        return Verdict("unknown", "no launch script runs it, and it imports torch_npu but puts nothing on an NPU")
    return Verdict(TRAINING, f"a training entry no launch script reaches ({trains})")


# workloads that serve unless they show a training launch (the MindCluster YAML reference also
# documents Deployments that train, whose rank table Ascend Operator writes)
SERVING_UNLESS_TRAINING = ("Deployment", "StatefulSet")


def manifest_verdict(doc_kind: str, words: set[str], path: str, launch: str | None = None) -> Verdict:
    """A manifest's job: training unless what it runs or how it is named says inference or serving.
    ``launch`` names the distributed training launch the workload runs, if any: a Deployment or
    StatefulSet with one trains, any other serves."""
    if doc_kind in ("DaemonSet", "ReplicaSet", "Service") or (doc_kind in SERVING_UNLESS_TRAINING and launch is None):
        return Verdict("inference", f"a {doc_kind} serves; it is not a training job")
    why = ci_path(path)
    if why:  # a scheduler's system-test fixture (tests/st/testcases/…): no cluster trains with it
        return Verdict("ci", f"a test fixture, {why}")
    hit = sorted(words & INFERENCE)
    if hit and not words & TRAIN_WORDS:  # "llama-chat-sft-train" trains a chat model
        return Verdict("inference", f"an inference or serving job (its names say {hit[0]!r})")
    folder_words: set[str] = set()
    for part in path.split("/")[:-1]:
        folder_words |= tokens(part)
    hit = sorted(folder_words & INFERENCE - GENERIC_FOLDER_WORDS)
    if hit and not folder_words & TRAIN_WORDS:
        return Verdict("inference", f"an inference sample (its folder says {hit[0]!r})")
    if doc_kind in SERVING_UNLESS_TRAINING:
        return Verdict(TRAINING, f"a {doc_kind} that runs a distributed training launch ({launch})")
    return Verdict(TRAINING, f"a {doc_kind} that the cluster schedules")
