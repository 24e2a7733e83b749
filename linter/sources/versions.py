"""Version pins of torch, torch_npu, CANN, MindCluster and MindIO, wherever a repository declares them.

Read from requirements/constraints files, ``pyproject.toml`` dependency strings, and Dockerfile
``pip install`` arguments, CANN toolkit package names and wheel file names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..kinds import PYPROJECT, README, REQUIREMENTS
from ..lazyre import LazyPattern
from ..span import SourceText, Span

# project names as PEP 503 normalizes them -> our component names
PACKAGES = {
    "torch": "torch",
    "torch-npu": "torch-npu",
    "mindio-acp": "mindio",
    "mindio-ttp": "mindio",
    "mindio": "mindio",
    "taskd": "mindcluster",
    "mindcluster": "mindcluster",
    "mindx-elastic": "mindcluster",
    "mindspeed-llm": "mindspeed-llm",
}
COMPONENTS = ("torch", "torch-npu", "cann", "mindcluster", "mindio", "mindspeed-llm")
MAX_VERSION_LENGTH = 100

REQUIREMENT = LazyPattern(  # a name starts at a token boundary: no quadratic retries inside a long word
    r"(?<![A-Za-z0-9._-])(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<op>===|==|~=|>=|<=|!=|>|<)\s*"
    r"(?P<version>[A-Za-z0-9][A-Za-z0-9._+*!-]*)"
)
WHEEL = LazyPattern(
    r"(?P<name>mindio_acp|mindio_ttp|taskd|torch_npu|torch)-(?P<version>[0-9][A-Za-z0-9._+]*?)-(?:cp|py)\d"
)
CANN_PACKAGE = LazyPattern(
    r"Ascend-cann-(?:toolkit|kernels[-_][A-Za-z0-9]+|nnae|nnal)_(?P<version>[0-9][A-Za-z0-9.]*?)_linux"
)
MINDCLUSTER_PACKAGE = LazyPattern(r"Ascend-mindxdl-[a-z-]+_(?P<version>[0-9][A-Za-z0-9.]*?)_linux")
# NAME=VALUE (an ARG or ENV default: any word, so that one no version reads is reported, RL602) or
# NAME VALUE (the ENV form: a version-like word only, not the prose of a comment or an echo)
ENV_VERSION = LazyPattern(
    r"\b(?P<name>CANN_VERSION|TORCH_NPU_VERSION|TORCH_VERSION|MINDIO_VERSION|MINDCLUSTER_VERSION)"
    r"(?:\s*=\s*[\"']?(?P<version>[A-Za-z0-9][A-Za-z0-9._+-]*)|\s+[\"']?(?P<spaced>[0-9][A-Za-z0-9._+]*))"
)
ENV_COMPONENTS = {
    "CANN_VERSION": "cann",
    "TORCH_NPU_VERSION": "torch-npu",
    "TORCH_VERSION": "torch",
    "MINDIO_VERSION": "mindio",
    "MINDCLUSTER_VERSION": "mindcluster",
}


@dataclass(slots=True)
class VersionPin:
    """One version pin of a component."""

    component: str  # torch | torch-npu | cann | mindcluster | mindio
    version: str  # as written
    op: str  # "==" for an exact pin; a lower bound otherwise is not a known version
    span: Span  # the version text
    line_span: Span  # the whole requirement
    # one of several versions the repository supports (a README's version table, a 1.8_requirements.txt):
    # the job runs on one of them, which one is not said
    alternative: bool = False

    @property
    def exact(self) -> bool:
        return self.op in ("==", "===") and "*" not in self.version and not self.alternative


@dataclass(eq=False, repr=False)
class PinFile:
    """The version pins of one file."""

    source: SourceText
    pins: list[VersionPin] = field(default_factory=list)
    # what says the file declares a GPU stack (a CUDA or ROCm image, a GPU requirements file); its
    # pins say nothing of an NPU job ('' for a file that does not)
    gpu_stack: str = ""


# a GPU stack named in a path: requirements_gpu.txt, docker/Dockerfile.cuda, docker-cuda/, -cu121
GPU_NAME = LazyPattern(r"(?i)(?:^|[/._-])(cuda|gpu|gpus|rocm|nvidia|cu1\d\d)(?=$|[/._-])")
# a GPU base image or package index: FROM nvidia/cuda, nvcr.io/nvidia/pytorch, pytorch/pytorch:*-cuda*,
# rocm/pytorch (also as an ARG default a FROM names); --index-url .../whl/cu121; torch==2.1.0+cu121
GPU_CONTENT = LazyPattern(
    r"(?im)^\s*(?:FROM\s+(?:--\S+\s+)*|ARG\s+\w*IMAGE\w*=)\S*(?:nvidia|cuda|rocm)\S*"
    r"|/whl/(?:cu\d+|rocm)|\+(?:cu\d{2,3}|rocm)\b"
)
NPU_STACK = ("torch-npu", "cann")  # a pin of either says the file is for NPUs, whatever its name


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# ``1.8_requirements.txt``: the dependencies of one of the torch versions a model supports
VERSIONED_REQUIREMENTS = LazyPattern(r"^(?:pytorch|torch)?[_-]?(\d+\.\d+(?:\.\d+)?)[_-]requirements", re.IGNORECASE)


def parse_pins(src: SourceText, kind: str) -> PinFile:
    """``kind`` is requirements, pyproject, dockerfile or readme."""
    if kind == README:
        return parse_readme(src)
    result = PinFile(src)
    if kind == REQUIREMENTS:
        named = VERSIONED_REQUIREMENTS.match(src.path.rsplit("/", 1)[-1])
        if named:  # the file's name is the torch version it serves, one of several
            whole = src.span(0, len(src.line_text(0)) if src.line_starts else 0)
            result.pins.append(VersionPin("torch", named.group(1), "==", whole, whole, alternative=True))
    for line0 in range(len(src.line_starts)):
        line = src.line_text(line0)
        base = src.line_start(line0)
        code = _strip_comment(line)
        if not code.strip():
            continue
        if kind == PYPROJECT:
            _strings(result, src, base, code)
        else:
            _requirements(result, src, base, code)
            _artifacts(result, src, base, code)
    result.gpu_stack = _gpu_stack(result)
    return result


def _gpu_stack(pins: PinFile) -> str:
    """What says the file declares a GPU stack (its name, a base image, a package index), or ''."""
    if not pins.pins or any(p.component in NPU_STACK for p in pins.pins):
        return ""
    src = pins.source
    named = GPU_NAME.search(src.path)
    if named:
        return f"{src.path} is named for {named.group(1)}"
    found = GPU_CONTENT.search(src.text)
    if found:
        line = src.line_of(found.start()) + 1
        return f"{src.path}:{line} declares a GPU stack ({found.group(0).strip()})"
    return ""


def _strip_comment(line: str) -> str:
    match = re.search(r"(^|\s)#", line)
    return line[: match.start()] if match else line


def _add(
    result: PinFile,
    src: SourceText,
    component: str,
    version: str,
    op: str,
    start: int,
    end: int,
    whole: tuple[int, int],
) -> None:
    version = version.rstrip(".,;")
    if len(version) > MAX_VERSION_LENGTH:
        return  # no release is spelled like this; quoting it would make every message as long
    end = start + len(version)
    result.pins.append(VersionPin(component, version, op, src.span(start, end), src.span(*whole)))


def _requirements(result: PinFile, src: SourceText, base: int, code: str) -> None:
    for m in REQUIREMENT.finditer(code):
        component = PACKAGES.get(normalize(m.group("name")))
        if component:
            _add(
                result,
                src,
                component,
                m.group("version"),
                m.group("op"),
                base + m.start("version"),
                base + m.end("version"),
                (base + m.start(), base + m.end()),
            )


def _artifacts(result: PinFile, src: SourceText, base: int, code: str) -> None:
    for m in WHEEL.finditer(code):
        component = PACKAGES.get(normalize(m.group("name")))
        if component:
            _add(
                result,
                src,
                component,
                m.group("version"),
                "==",
                base + m.start("version"),
                base + m.end("version"),
                (base + m.start(), base + m.end()),
            )
    for pattern, component in ((CANN_PACKAGE, "cann"), (MINDCLUSTER_PACKAGE, "mindcluster")):
        for m in pattern.finditer(code):
            _add(
                result,
                src,
                component,
                m.group("version"),
                "==",
                base + m.start("version"),
                base + m.end("version"),
                (base + m.start(), base + m.end()),
            )
    for m in ENV_VERSION.finditer(code):
        group = "version" if m.group("version") is not None else "spaced"
        _add(
            result,
            src,
            ENV_COMPONENTS[m.group("name")],
            m.group(group),
            "==",
            base + m.start(group),
            base + m.end(group),
            (base + m.start(), base + m.end()),
        )


def _strings(result: PinFile, src: SourceText, base: int, code: str) -> None:
    for q in re.finditer(r"\"([^\"]*)\"|'([^']*)'", code):
        inner_start = q.start() + 1
        inner = q.group(1) if q.group(1) is not None else q.group(2)
        m = REQUIREMENT.match(inner.strip())
        if not m:
            continue
        lead = len(inner) - len(inner.lstrip())
        component = PACKAGES.get(normalize(m.group("name")))
        if component:
            offset = base + inner_start + lead
            _add(
                result,
                src,
                component,
                m.group("version"),
                m.group("op"),
                offset + m.start("version"),
                offset + m.end("version"),
                (offset + m.start(), offset + m.end()),
            )


def pins_in_words(words: list) -> list[VersionPin]:
    """Pins in the words of a ``pip install torch==2.1.0 torch_npu==2.1.0.post10`` command."""
    out: list[VersionPin] = []
    for word in words:
        value = word.value
        if value is None:
            continue
        m = REQUIREMENT.fullmatch(value.strip())
        if not m:
            continue
        component = PACKAGES.get(normalize(m.group("name")))
        if component is None:
            continue
        span = word.span
        start = word.text.find(m.group("version")) if word.text == value else -1
        version_span = (
            span.source.span(span.start + start, span.start + start + len(m.group("version"))) if start >= 0 else span
        )
        out.append(VersionPin(component, m.group("version"), m.group("op"), version_span, span))
    return out


# -- README version tables ---------------------------------------------------------------------------
# a Markdown table row: `| PyTorch 1.8 | torchvision==0.9.1 |`, `| CANN | 5.1.RC2 | - |`, `| PyTorch | [1.11.0](…) |`
_ROW = LazyPattern(r"^\s*\|(?P<first>[^|\n]*)\|(?P<second>[^|\n]*)\|")
_NAMED_TORCH = LazyPattern(r"^\s*(?:pytorch|torch)[\s_-]*v?(?P<version>\d+\.\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
_README_COMPONENTS = {
    "pytorch": "torch",
    "torch": "torch",
    "pytorch版本": "torch",
    "torch_npu": "torch-npu",
    "torch-npu": "torch-npu",
    "frameworkptadapter": "torch-npu",
    "cann": "cann",
    "cann版本": "cann",
}
# a cell holding one version, bare or as a link's text: `1.11.0`, `[1.11.0](…)`, `PyTorch 1.11`, `8.0.RC2`
_CELL_VERSION = LazyPattern(
    r"^\s*\[?\s*(?:pytorch\s*|torch\s*|v)?(?P<version>\d+\.\d+(?:\.(?:RC\d+|\d+))*(?:\.post\d+)?)\s*\]?"
    r"(?:\([^)]*\))?\s*$",
    re.IGNORECASE,
)


_SEPARATOR = LazyPattern(r"^\s*\|(?:\s*:?-{3,}:?\s*\|)+\s*$")
# headers of requirement tables: | Mandatory | Minimum | Recommend | (LLaMA-Factory), 最低 / 推荐
_BOUNDS_HEADER = LazyPattern(r"(?i)\b(?:minimum|min\.?|recommend(?:ed)?|required)\b|最低|推荐|建议")


def parse_readme(src: SourceText) -> PinFile:
    """Versions a README declares in its version tables: the PyTorch versions a model supports
    (``| PyTorch 1.8 | torchvision==0.9.1 |``, one row each) and the software a model was verified
    with (``| CANN | 5.1.RC2 |``, ``| PyTorch | 1.11.0 |``). Each is one of the versions the
    repository supports (an alternative); a range (``>1.5.0``, ``1.5.0+``) declares none."""
    result = PinFile(src)
    text = src.text
    if "|" not in text:
        return result
    previous = ""  # the table row before this one
    bounds = False  # a table of minimum and recommended versions: bounds, not versions a job runs
    sections = _Sections()
    for line0 in range(len(src.line_starts)):
        line = src.line_text(line0)
        if not line.lstrip().startswith("|"):
            previous, bounds = "", False
            sections.read(line)
            continue
        if sections.inference:  # a model's inference guide names the inference server's CANN
            continue
        if _SEPARATOR.match(line):  # the row above was the header
            bounds = bool(_BOUNDS_HEADER.search(previous))
            continue
        previous = line
        if bounds:
            continue
        row = _ROW.match(line)
        if row is None:
            continue
        base = src.line_start(line0)
        first, second = row.group("first"), row.group("second")
        named = _NAMED_TORCH.match(first)
        if named is not None:
            _readme_pin(result, src, "torch", named, base + row.start("first"), base, line)
            continue
        component = _README_COMPONENTS.get(first.strip().lower())
        if component is None:
            continue
        value = _CELL_VERSION.match(second)
        if value is not None:
            _readme_pin(result, src, component, value, base + row.start("second"), base, line)
    return result


# a heading of an inference guide: 推理 (inference), 推理指导, 推理环境准备; Inference, Offline inference
_INFERENCE_HEADING = LazyPattern(r"(?i)推理|\binfer(?:ence)?\b")
_HEADING = LazyPattern(r"^(#{1,6})\s")


class _Sections:
    """The Markdown headings above a line, and whether one of them opens an inference guide (ModelZoo
    READMEs append one, with the inference server's software table, after the training part)."""

    def __init__(self) -> None:
        self.open: list[tuple[int, bool]] = []  # (level, an inference heading) of each heading above
        self.fenced = False

    @property
    def inference(self) -> bool:
        return any(inference for _, inference in self.open)

    def read(self, line: str) -> None:
        if line.lstrip().startswith(("```", "~~~")):
            self.fenced = not self.fenced
            return
        heading = None if self.fenced else _HEADING.match(line)
        if heading is None:
            return
        level = len(heading.group(1))
        self.open = [(lv, inf) for lv, inf in self.open if lv < level]
        self.open.append((level, bool(_INFERENCE_HEADING.search(line))))


def _readme_pin(result: PinFile, src: SourceText, component: str, match, offset: int, base: int, line: str) -> None:
    start = offset + match.start("version")
    end = offset + match.end("version")
    whole = src.span(base, base + len(line.rstrip()))
    result.pins.append(VersionPin(component, match.group("version"), "==", src.span(start, end), whole, True))
