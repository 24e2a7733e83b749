"""Seeded generators of repositories laid out like real ones, for the recovery-lint benchmark.

    python bench/zoo.py zoo OUT_DIR --files N [--seed S] [--git]
    python bench/zoo.py gitignore-repro OUT_DIR

``zoo``: a model zoo shaped like Ascend/ModelZoo-PyTorch ``PyTorch/built-in`` (see bench/README.md for
the proportions and where they come from): area folders, one folder per model with its launch scripts
under ``test/``, an entry those scripts run, a deep library no launch reaches, configs, unit tests,
nested ``.gitignore`` files, vendored third-party projects (a transformers copy, an ESPnet-style recipe
tree, a fairseq copy, C++ extensions), build output that those ``.gitignore`` files hide, and for some
models a Kubernetes job manifest with its start scripts. ``--git`` makes it a git work tree with every
file that is not ignored added to the index, as a checkout is.

``gitignore-repro``: 100 folders, each with a 100-line .gitignore and 40 two-line Python files that no
line ignores (issue 11: matching every path against every rule of the tree took 86 s).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from generate import job_files, plan_job

# --------------------------------------------------------------------------------------------
# The nested-.gitignore reproduction

REPRO_FOLDERS = 100
REPRO_LINES = 100
REPRO_FILES = 40


def gitignore_repro_lines(folder: int, lines: int = REPRO_LINES) -> list[str]:
    """A mix of the line shapes real .gitignore files hold; none matches the Python files."""
    shapes = (
        "*.tmp{i}",
        "cache{i}/",
        "/build{i}",
        "**/logs{i}",
        "out{i}/**",
        "!keep{i}.tmp",
        "data/raw{i}/",
        "*.ckpt{i}",
        "[Bb]in{i}/",
        "# section {i}",
    )
    return [shapes[i % len(shapes)].format(i=f"{folder}_{i}") for i in range(lines)]


def write_gitignore_repro(
    out: Path, folders: int = REPRO_FOLDERS, lines: int = REPRO_LINES, files: int = REPRO_FILES
) -> list[Path]:
    """Write the reproduction under ``out``; return the Python files (all of them are to be linted)."""
    written = []
    for f in range(folders):
        folder = out / f"pkg{f:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".gitignore").write_text("\n".join(gitignore_repro_lines(f, lines)) + "\n", encoding="utf-8")
        for i in range(files):
            path = folder / f"mod{i:02d}.py"
            path.write_text(f"import os\nVALUE = {i}\n", encoding="utf-8")
            written.append(path)
    return written


# --------------------------------------------------------------------------------------------
# File sizes: log-normal, fitted to the medians and 90th percentiles of PyTorch/built-in


def _size(rng: random.Random, median: int, p90: int, cap: int) -> int:
    sigma = math.log(p90 / median) / 1.2816
    return min(cap, int(rng.lognormvariate(math.log(median), sigma)))


# --------------------------------------------------------------------------------------------
# Python

PY_FUNCTION = '''

def {name}(inputs, scale=1.0, eps=1e-6):
    """Normalise ``inputs`` and apply the {name} transform."""
    total = 0.0
    for value in inputs:
        total += float(value) * scale
    mean = total / max(len(inputs), 1)
    return [(float(v) - mean) / (abs(mean) + eps) for v in inputs]
'''

PY_CLASS = """

class {name}(nn.Module):
    def __init__(self, channels={channels}, stride={stride}):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.bn(self.conv(x)))
        if out.shape == x.shape:
            out = out + x
        return out
"""

PY_TEST = """

class Test{name}(unittest.TestCase):
    def setUp(self):
        self.values = [1.0, 2.0, 3.0, {n}.0]

    def test_{lower}_keeps_length(self):
        self.assertEqual(len(self.values), 4)

    def test_{lower}_mean(self):
        self.assertAlmostEqual(sum(self.values) / 4, {mean})
"""

PY_CHECKPOINT = """

def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")


def load_checkpoint(model, path):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["state_dict"])
    return state.get("epoch", 0)
"""

PY_ENTRY_MAIN = """

def parse_args():
    parser = argparse.ArgumentParser(description="{model} training")
    parser.add_argument("--data", default="/data/dataset")
    parser.add_argument("--epochs", type=int, default={epochs})
    parser.add_argument("--batch-size", type=int, default={batch})
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--device", default="npu")
    return parser.parse_args()


def main():
    args = parse_args()
    torch.npu.set_device(args.local_rank)
    if int(os.environ.get("RANK_SIZE", "1")) > 1:
        dist.init_process_group(backend="hccl")
    model = build_model().npu()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        loss = train_one_epoch(model, optimizer, epoch)
        save_checkpoint({{"epoch": epoch + 1, "state_dict": model.state_dict()}}, loss < 0.1)


if __name__ == "__main__":
    main()
"""


def python_text(rng: random.Random, target: int, *, header: str, chunk: Callable[[int], str]) -> str:
    parts, size, i = [header], len(header), 0
    while size < target:
        part = chunk(i)
        parts.append(part)
        size += len(part)
        i += 1
    return "".join(parts)


def library_module(rng: random.Random, tag: str, npu: bool = False) -> str:
    header = f'"""{tag}: building blocks."""\n\nimport math\n\nimport torch\nimport torch.nn as nn\n'
    if npu:
        header += "import torch_npu  # noqa: F401\n"

    def chunk(i: int) -> str:
        if rng.random() < 0.5:
            return PY_FUNCTION.format(name=f"{tag}_op_{i}")
        return PY_CLASS.format(name=f"{tag.title().replace('_', '')}Block{i}", channels=64 << (i % 4), stride=1 + i % 2)

    return python_text(rng, _size(rng, 4400, 25000, 120_000), header=header, chunk=chunk)


def test_module(rng: random.Random, tag: str) -> str:
    header = f'"""Unit tests for {tag}."""\n\nimport unittest\n'

    def chunk(i: int) -> str:
        return PY_TEST.format(name=f"{tag.title().replace('_', '')}{i}", lower=f"case{i}", n=i + 4, mean=(10 + i) / 4)

    return python_text(rng, _size(rng, 2500, 12000, 60_000), header=header, chunk=chunk) + (
        '\n\nif __name__ == "__main__":\n    unittest.main()\n'
    )


def entry_module(rng: random.Random, model: str, tag: str) -> str:
    header = (
        f'"""{model}: training entry."""\n\nimport argparse\nimport os\nimport shutil\n\nimport torch\n'
        "import torch.distributed as dist\nimport torch.nn as nn\nimport torch_npu  # noqa: F401\n"
    )
    body = python_text(
        rng, _size(rng, 9000, 30000, 80_000), header=header, chunk=lambda i: PY_FUNCTION.format(name=f"{tag}_step_{i}")
    )
    helpers = "\n\ndef build_model():\n    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 224 * 224, 1000))\n"
    helpers += "\n\ndef train_one_epoch(model, optimizer, epoch):\n    return 1.0 / (epoch + 1)\n"
    return (
        body
        + PY_CHECKPOINT
        + helpers
        + PY_ENTRY_MAIN.format(model=model, epochs=rng.choice((90, 120, 300)), batch=rng.choice((256, 512)))
    )


def python_script(rng: random.Random, purpose: str) -> str:
    """A stand-alone tool (export, evaluation, preprocessing): a __main__ guard, not launched by a job."""
    header = f'"""{purpose}."""\n\nimport argparse\nimport os\n\nimport torch\n'
    text = python_text(
        rng,
        _size(rng, 3000, 12000, 40_000),
        header=header,
        chunk=lambda i: PY_FUNCTION.format(name=f"{purpose.split()[0].lower()}_{i}"),
    )
    return text + '\n\nif __name__ == "__main__":\n    print(os.getcwd())\n'


# --------------------------------------------------------------------------------------------
# Shell

LAUNCH_HEAD = """#!/bin/bash

################ basic settings (review per model) ################
# Network name, same as the folder name
Network="{network}"
# batch size of the whole job
batch_size={batch}
# number of NPUs
export RANK_SIZE={devices}
# dataset path, passed with --data_path
data_path=""
# epochs
train_epochs={epochs}

for para in $*
do
    if [[ $para == --data_path* ]];then
        data_path=`echo ${{para#*=}}`
    elif [[ $para == --batch_size* ]];then
        batch_size=`echo ${{para#*=}}`
    fi
done

if [[ $data_path == "" ]];then
    echo "[Error] para \\"data_path\\" must be configured"
    exit 1
fi

cur_path=`pwd`
cur_path_last_dirname=${{cur_path##*/}}
if [ x"${{cur_path_last_dirname}}" == x"test" ];then
    test_path_dir=${{cur_path}}
    cd ..
    cur_path=`pwd`
else
    test_path_dir=${{cur_path}}/test
fi

ASCEND_DEVICE_ID=0
mkdir -p ${{test_path_dir}}/output/${{ASCEND_DEVICE_ID}}
start_time=$(date +%s)
source ${{test_path_dir}}/env_npu.sh
"""

LAUNCHES = (
    # a device loop with nohup and taskset, one process per NPU
    """
KERNEL_NUM=$(($(nproc)/8))
for((RANK_ID=0;RANK_ID<RANK_SIZE;RANK_ID++));
do
    export RANK_ID=$RANK_ID
    export LOCAL_RANK=$RANK_ID
    PID_START=$((KERNEL_NUM * RANK_ID))
    PID_END=$((PID_START + KERNEL_NUM - 1))
    nohup taskset -c $PID_START-$PID_END python3 ${{cur_path}}/{entry} \\
        --data=${{data_path}} --epochs=${{train_epochs}} --batch-size=${{batch_size}} \\
        --local_rank=$RANK_ID > ${{test_path_dir}}/output/${{ASCEND_DEVICE_ID}}/train_${{RANK_ID}}.log 2>&1 &
done
wait
""",
    """
nohup python3 -m torch.distributed.launch --nproc_per_node=${{RANK_SIZE}} ${{cur_path}}/{entry} \\
    --data=${{data_path}} --epochs=${{train_epochs}} --batch-size=${{batch_size}} \\
    > ${{test_path_dir}}/output/${{ASCEND_DEVICE_ID}}/train_${{ASCEND_DEVICE_ID}}.log 2>&1 &
wait
""",
    """
torchrun --nproc_per_node=${{RANK_SIZE}} --master_port=29500 ${{cur_path}}/{entry} \\
    --data=${{data_path}} --epochs=${{train_epochs}} --batch-size=${{batch_size}} \\
    > ${{test_path_dir}}/output/${{ASCEND_DEVICE_ID}}/train_${{ASCEND_DEVICE_ID}}.log 2>&1
""",
    """
nohup python3 ${{cur_path}}/{entry} --data=${{data_path}} --epochs=${{train_epochs}} \\
    --batch-size=${{batch_size}} --device_num=${{RANK_SIZE}} \\
    > ${{test_path_dir}}/output/${{ASCEND_DEVICE_ID}}/train_${{ASCEND_DEVICE_ID}}.log 2>&1 &
wait
""",
)

LAUNCH_TAIL = """
end_time=$(date +%s)
e2e_time=$(( $end_time - $start_time ))
echo "------------------ Final result ------------------"
log=${{test_path_dir}}/output/${{ASCEND_DEVICE_ID}}/train_${{ASCEND_DEVICE_ID}}.log
FPS=`grep -a 'FPS' $log | awk -F 'FPS' '{{print $2}}' | tail -n 10 | awk '{{a+=$1}} END {{printf("%.3f",a/NR)}}'`
echo "Final Performance images/sec : $FPS"
echo "E2E Training Duration sec : $e2e_time"
"""

ENV_NPU = """#!/bin/bash
CANN_INSTALL_PATH_CONF='/etc/Ascend/ascend_cann_install.info'
if [ -f $CANN_INSTALL_PATH_CONF ]; then
    CANN_INSTALL_PATH=$(cat $CANN_INSTALL_PATH_CONF | grep Install_Path | cut -d "=" -f 2)
else
    CANN_INSTALL_PATH="/usr/local/Ascend"
fi
source ${CANN_INSTALL_PATH}/ascend-toolkit/set_env.sh

# host logs to stdout: 0 off, 1 on
export ASCEND_SLOG_PRINT_TO_STDOUT=0
# log level: 0 debug, 1 info, 2 warning, 3 error
export ASCEND_GLOBAL_LOG_LEVEL=3
export TASK_QUEUE_ENABLE=1
export HCCL_WHITELIST_DISABLE=1
export HCCL_CONNECT_TIMEOUT=1200
"""

SHELL_UTIL = """
{name}() {{
    local src=$1 dst=$2
    if [ ! -d "$dst" ]; then
        mkdir -p "$dst"
    fi
    for f in "$src"/*; do
        [ -f "$f" ] || continue
        cp "$f" "$dst/$(basename "$f").{i}"
    done
    echo "{name}: done"
}}
"""


def launch_script(rng: random.Random, network: str, entry: str, devices: int) -> str:
    head = LAUNCH_HEAD.format(
        network=network, batch=rng.choice((256, 1024, 4096)), devices=devices, epochs=rng.choice((1, 90))
    )
    launch = LAUNCHES[rng.randrange(len(LAUNCHES))] if devices > 1 else LAUNCHES[3]
    return head + launch.format(entry=entry) + LAUNCH_TAIL


def shell_utility(rng: random.Random, tag: str) -> str:
    text, i = "#!/usr/bin/env bash\nset -euo pipefail\n", 0
    target = _size(rng, 1500, 7500, 40_000)
    while len(text) < target:
        text += SHELL_UTIL.format(name=f"{tag}_{i}", i=i)
        i += 1
    return text + f'\n{tag}_0 "$1" "$2"\n'


# --------------------------------------------------------------------------------------------
# YAML, pins, ignore files and the rest


def config_yaml(rng: random.Random, tag: str) -> str:
    lines = [
        f"# {tag} config",
        "model:",
        f"  type: {tag.title()}",
        "  backbone:",
        f"    depth: {rng.choice((18, 50, 101))}",
    ]
    i = 0
    target = _size(rng, 600, 2000, 20_000)
    while sum(map(len, lines)) < target:
        lines += [
            f"stage_{i}:",
            f"  lr: {rng.choice((0.1, 0.01, 0.001))}",
            f"  steps: [{i * 10}, {i * 20}]",
            f"  warmup: {i % 5}",
        ]
        i += 1
    return "\n".join(lines) + "\n"


def requirements(rng: random.Random) -> str:
    pins = [
        f"torchvision==0.{rng.choice((9, 12, 16))}.0",
        "numpy",
        "Pillow",
        "tqdm",
        "pyyaml",
        "scipy",
        "opencv-python",
    ]
    lines = rng.sample(pins, k=rng.randint(2, len(pins)))
    if rng.random() < 0.1:
        lines.insert(0, rng.choice(("torch==1.11.0", "torch>=1.8", "torch==2.1.0")))
    return "\n".join(lines) + "\n"


DOCKERFILE = """ARG FROM_IMAGE_NAME
FROM ${FROM_IMAGE_NAME}

COPY requirements.txt .
RUN pip3.7 install -r requirements.txt
"""

GITIGNORE_BASE = """# Byte-compiled / optimized / DLL files
__pycache__/
*.py[cod]
*$py.class
*.so
.Python
build/
develop-eggs/
dist/
downloads/
eggs/
.eggs/
lib64/
parts/
sdist/
var/
wheels/
*.egg-info/
.installed.cfg
*.egg
MANIFEST
*.manifest
*.spec
pip-log.txt
pip-delete-this-directory.txt
htmlcov/
.tox/
.nox/
.coverage
.coverage.*
.cache
nosetests.xml
coverage.xml
*.cover
.hypothesis/
.pytest_cache/
*.mo
*.pot
*.log
local_settings.py
db.sqlite3
instance/
.webassets-cache
.scrapy
docs/_build/
target/
.ipynb_checkpoints
profile_default/
ipython_config.py
.python-version
celerybeat-schedule
*.sage.py
.env
.venv
env/
venv/
ENV/
env.bak/
venv.bak/
.spyderproject
.spyproject
.ropeproject
/site
.mypy_cache/
.dmypy.json
dmypy.json
.pyre/
.idea/
.vscode/
*.swp
.DS_Store
"""

GITIGNORE_PROJECT = (
    "work_dirs/",
    "output/",
    "outputs/",
    "runs/",
    "kernel_meta/",
    "*.pth",
    "*.pt",
    "*.onnx",
    "*.om",
    "data/",
    "!data/README.md",
    "checkpoints/",
    "**/fusion_result.json",
    "/test/output/",
    "wandb/",
    "lightning_logs/",
    "*.npy",
    "*.tar.gz",
    "exp/",
    "dump/",
)


def gitignore(rng: random.Random) -> str:
    base = GITIGNORE_BASE.splitlines()
    extra = rng.sample(GITIGNORE_PROJECT, k=rng.randint(4, len(GITIGNORE_PROJECT)))
    return "\n".join([*base, "", "# project", *extra]) + "\n"


def prose(rng: random.Random, title: str) -> str:
    words = ("model", "training", "NPU", "dataset", "accuracy", "epoch", "batch", "precision", "script", "result")
    text = f"# {title}\n\n"
    target = _size(rng, 3000, 15000, 60_000)
    while len(text) < target:
        text += " ".join(rng.choice(words) for _ in range(14)) + ".\n"
    return text


def blob(rng: random.Random, kind: str) -> str:
    """A file the linter does not read (C++, Perl, JSON, .conf): its size only costs the walk a stat."""
    line = {"cpp": "int f{i}(int x) {{ return x * {i}; }}\n", "pl": 'print "{i}\\n";\n', "json": '"k{i}": {i},\n'}.get(
        kind, "key{i} = {i}\n"
    )
    return "".join(line.format(i=i) for i in range(rng.randint(10, 120)))


# --------------------------------------------------------------------------------------------
# One model

AREAS = {
    "cv": ("classification", "detection", "semantic_segmentation", "pose_estimation", "object_tracking"),
    "nlp": ("",),
    "audio": ("",),
    "mlm": ("",),
    "foundation": ("",),
    "diffusion": ("",),
    "others": ("",),
}
NAMES = (
    "ResNet50",
    "YOLOv5",
    "Bert-Squad",
    "GPT-2",
    "Conformer",
    "ViT",
    "Swin",
    "UNet",
    "DeepLabV3",
    "FastSCNN",
    "Transformer",
    "mBART",
    "Wenet",
    "ESPnet2",
    "LLaMA",
    "ChatGLM",
    "StableDiffusion",
    "CLIP",
    "DETR",
    "HRNet",
)
LIBRARY_FOLDERS = (
    "models/backbones/resnet",
    "models/backbones/vit",
    "models/dense_heads/anchor",
    "models/necks",
    "core/bbox/assigners",
    "core/evaluation/metrics",
    "datasets/pipelines/transforms",
    "datasets/samplers",
    "utils/dist",
    "ops/functions",
    "losses/segmentation",
    "apis/inference",
)


class Model:
    """The files of one model folder, most important first, so a trimmed model still makes sense."""

    def __init__(self, index: int, seed: int) -> None:
        self.index, self.seed = index, seed
        self.rng = rng = random.Random(f"recovery-lint-zoo:{seed}:{index}")
        area = rng.choice(tuple(AREAS))
        sub = rng.choice(AREAS[area])
        name = f"{rng.choice(NAMES)}_ID{1000 + index:04d}_for_PyTorch"
        self.folder = "/".join(p for p in (area, sub, name) if p)
        self.name = name
        self.tag = f"m{index}"
        self.files: list[tuple[str, str]] = []

    def add(self, rel: str, text: str) -> None:
        self.files.append((rel, text))

    def build(self) -> list[tuple[str, str]]:
        rng = self.rng
        entry = rng.choice(("main.py", "train.py", "pretrain.py", f"{self.tag}/train_net.py"))
        self._launch_scripts(entry)
        self.add(entry, entry_module(rng, self.name, self.tag))
        self.add("requirements.txt", requirements(rng))
        self.add("README.md", prose(rng, self.name))
        if rng.random() < 0.3:
            self._manifest_job()
        if rng.random() < 0.5:
            self.add(".gitignore", gitignore(rng))
            self._ignored_output()
        if rng.random() < 0.4:
            self.add("Dockerfile", DOCKERFILE)
            self.add("docker_start.sh", shell_utility(rng, f"{self.tag}_docker"))
        if rng.random() < 0.45:
            for version in ("1.8", "2.1"):
                self.add(f"{version}_requirements.txt", requirements(rng))
        self.add("LICENSE", "Apache License\nVersion 2.0, January 2004\n")
        self.add("modelzoo_level.txt", "FuncStatus:OK\nPerfStatus:OK\n")
        self._library()
        self._tools_and_tests()
        self._vendored()
        return self.files

    def _launch_scripts(self, entry: str) -> None:
        rng = self.rng
        self.add("test/env_npu.sh", ENV_NPU)
        kinds = ["full_8p", "full_1p", "performance_1p", "performance_8p"]
        kinds += rng.sample(["eval_1p", "full_16p", "performance_16p", "RT2_full_8p", "full_32p"], k=rng.randint(0, 4))
        for kind in kinds:
            devices = int(kind.rsplit("_", 1)[1].rstrip("p"))
            self.add(f"test/train_{kind}.sh", launch_script(rng, self.name, entry, devices))

    def _manifest_job(self) -> None:
        """A Kubernetes job with its start scripts, as in the mindcluster-deploy examples."""
        spec, job_rng = plan_job(self.index, self.seed)
        for rel, text in job_files(spec, job_rng)[:4]:
            self.add(rel, text)

    def _ignored_output(self) -> None:
        """What a used checkout holds under the folders its .gitignore hides."""
        rng = self.rng
        for i in range(rng.randint(2, 12)):
            self.add(f"build/lib/{self.tag}/mod_{i}.py", library_module(rng, f"{self.tag}_built{i}"))
        self.add(f"{self.tag}.egg-info/SOURCES.txt", "setup.py\n")
        self.add("test/output/0/train_0.log", "step 1 loss 6.9\n")
        self.add("kernel_meta/fusion_result.json", "{}\n")

    def _library(self) -> None:
        rng = self.rng
        for i in range(rng.randint(8, 60)):
            folder = rng.choice(LIBRARY_FOLDERS)
            self.add(
                f"{self.tag}/{folder}/part_{i}.py", library_module(rng, f"{self.tag}_{i}", npu=rng.random() < 0.06)
            )
        self.add(
            f"{self.tag}/utils/checkpoint.py", '"""Checkpoints."""\n\nimport shutil\n\nimport torch\n' + PY_CHECKPOINT
        )
        for i in range(rng.randint(0, 30)):
            self.add(
                f"configs/{rng.choice(('base', 'coco', 'imagenet', 'ade20k'))}/cfg_{i}.yaml", config_yaml(rng, self.tag)
            )
        for i in range(rng.randint(0, 25)):
            self.add(f"configs/_base_/cfg_{i}.py", f"model = dict(type='{self.tag}', depth={50 + i})\nlr = 0.{i + 1}\n")
        for i in range(rng.randint(0, 8)):
            self.add(f"{self.tag}/ops/csrc/op_{i}.cpp", blob(rng, "cpp"))
            self.add(f"{self.tag}/ops/csrc/op_{i}.h", blob(rng, "cpp"))
        for i in range(rng.randint(2, 24)):
            self.add(f"docs/{rng.choice(('en', 'zh', 'tutorials'))}/page_{i}.md", prose(rng, f"page {i}"))
        for i in range(rng.randint(0, 12)):
            self.add(f"resources/labels_{i}.txt", blob(rng, "txt"))

    def _tools_and_tests(self) -> None:
        rng = self.rng
        for purpose in rng.sample(
            ("pth2onnx export", "evaluate accuracy", "preprocess dataset", "infer demo", "convert weights"),
            k=rng.randint(1, 4),
        ):
            self.add(f"tools/{purpose.split()[0]}.py", python_script(rng, purpose))
        self.add("tools/dist_train.sh", launch_script(rng, self.name, "tools/train.py", 8))
        self.add("tools/train.py", entry_module(rng, self.name, f"{self.tag}_tools"))
        for i in range(rng.randint(0, 25)):
            self.add(f"tests/test_{self.tag}_{i}.py", test_module(rng, f"{self.tag}_{i}"))
        for i in range(rng.randint(0, 6)):
            self.add(f"conf/{self.tag}_{i}.conf", blob(rng, "conf"))
            self.add(f"data/meta_{i}.json", blob(rng, "json"))

    def _vendored(self) -> None:
        roll = self.rng.random()
        if roll < 0.12:
            self._transformers_copy()
        elif roll < 0.2:
            self._espnet_recipes()
        elif roll < 0.3:
            self._fairseq_copy()
        elif roll < 0.4:
            self._third_party_extension()

    def _transformers_copy(self) -> None:
        rng = self.rng
        self.add("transformers/setup.py", "from setuptools import setup\n\nsetup(name='transformers')\n")
        self.add("transformers/.gitignore", gitignore(rng))
        for i in range(rng.randint(10, 30)):
            self.add(f"transformers/src/transformers/util_{i}.py", library_module(rng, f"{self.tag}_hf{i}"))
        for m in range(rng.randint(20, 90)):
            base = f"transformers/src/transformers/models/arch{m}"
            self.add(f"{base}/__init__.py", "")
            for part in ("configuration", "modeling", "tokenization"):
                self.add(f"{base}/{part}_arch{m}.py", library_module(rng, f"{self.tag}_{part}{m}"))
            self.add(
                f"transformers/tests/models/arch{m}/test_modeling_arch{m}.py", test_module(rng, f"{self.tag}_arch{m}")
            )
            self.add(f"transformers/docs/source/en/model_doc/arch{m}.mdx", prose(rng, f"arch{m}"))
        for task in rng.sample(
            ("text-classification", "translation", "summarization", "question-answering", "language-modeling"), k=3
        ):
            folder = f"transformers/examples/pytorch/{task}"
            self.add(f"{folder}/run_{task.replace('-', '_')}.py", python_script(rng, f"{task} example"))
            self.add(f"{folder}/requirements.txt", requirements(rng))
            self.add(f"{folder}/README.md", prose(rng, task))
        self.add("transformers/docker/transformers-pytorch-tpu/Dockerfile", DOCKERFILE)

    def _espnet_recipes(self) -> None:
        rng = self.rng
        for i in range(rng.randint(30, 80)):
            self.add(f"utils/util_{i}.sh", shell_utility(rng, f"{self.tag}_u{i}"))
            if i % 3 == 0:
                self.add(f"utils/util_{i}.pl", blob(rng, "pl"))
        for corpus in range(rng.randint(8, 30)):
            base = f"egs/corpus{corpus}/asr1"
            self.add(f"{base}/run.sh", shell_utility(rng, f"{self.tag}_run{corpus}"))
            self.add(f"{base}/path.sh", "export PATH=$PWD/utils:$PATH\n")
            self.add(f"{base}/cmd.sh", "export train_cmd=run.pl\n")
            for conf in ("train", "decode", "lm"):
                self.add(f"{base}/conf/{conf}.yaml", config_yaml(rng, f"{self.tag}_{conf}"))
            self.add(f"{base}/conf/fbank.conf", blob(rng, "conf"))
            for i in range(rng.randint(1, 5)):
                self.add(f"{base}/local/data_prep_{i}.sh", shell_utility(rng, f"{self.tag}_prep{i}"))
        for i in range(rng.randint(30, 90)):
            self.add(f"espnet/nets/pytorch_backend/part_{i}.py", library_module(rng, f"{self.tag}_net{i}"))
        for i in range(rng.randint(10, 30)):
            self.add(f"test/test_{self.tag}_espnet_{i}.py", test_module(rng, f"{self.tag}_espnet{i}"))

    def _fairseq_copy(self) -> None:
        rng = self.rng
        self.add("setup.py", "from setuptools import setup\n\nsetup(name='fairseq')\n")
        for folder in ("models", "modules", "tasks", "criterions", "data", "optim"):
            for i in range(rng.randint(10, 40)):
                self.add(f"fairseq/{folder}/{folder}_{i}.py", library_module(rng, f"{self.tag}_{folder}{i}"))
        for i in range(rng.randint(10, 40)):
            self.add(f"tests/test_fairseq_{i}.py", test_module(rng, f"{self.tag}_fs{i}"))
        for example in range(rng.randint(5, 20)):
            self.add(f"examples/ex{example}/README.md", prose(rng, f"example {example}"))
            self.add(f"examples/ex{example}/prepare.sh", shell_utility(rng, f"{self.tag}_ex{example}"))

    def _third_party_extension(self) -> None:
        rng = self.rng
        lib = rng.choice(("apex", "mmcv", "mmdet", "timm"))
        self.add(f"third_party/{lib}/setup.py", f"from setuptools import setup\n\nsetup(name='{lib}')\n")
        for i in range(rng.randint(40, 150)):
            self.add(f"third_party/{lib}/{lib}/sub{i % 7}/mod_{i}.py", library_module(rng, f"{self.tag}_{lib}{i}"))
        for i in range(rng.randint(10, 40)):
            self.add(f"third_party/{lib}/csrc/k_{i}.cu", blob(rng, "cpp"))
        for i in range(rng.randint(10, 30)):
            self.add(f"third_party/{lib}/tests/test_{lib}_{i}.py", test_module(rng, f"{self.tag}_{lib}t{i}"))


# --------------------------------------------------------------------------------------------
# The whole zoo

MANIFEST = re.compile(rb"^apiVersion:", re.MULTILINE)
ROOT_GITIGNORE = ".idea/\n.vscode/\n__pycache__/\n*.pyc\nkernel_meta/\n"


def generate_zoo(out_dir: Path, files: int, seed: int = 0) -> list[Path]:
    """Write exactly ``files`` files under out_dir (empty or absent); return them sorted."""
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FileExistsError(f"{out_dir} is not empty")
    written = [_write(out_dir / ".gitignore", ROOT_GITIGNORE)]
    index = 0
    while len(written) < files:
        model = Model(index, seed)
        for rel, text in model.build()[: files - len(written)]:
            written.append(_write(out_dir / model.folder / rel, text))
        index += 1
    return sorted(written)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def make_work_tree(root: Path) -> None:
    """``git init`` and add every file that is not ignored, as in a checkout."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", "-c", "core.autocrlf=false", *args], cwd=root, env=env, check=True, capture_output=True)


def describe_zoo(root: Path, files: list[Path]) -> str:
    kinds = Counter(_zoo_kind(p) for p in files)
    size = sum(p.stat().st_size for p in files)
    launches = sum(1 for p in files if p.parent.name == "test" and p.name.startswith("train_") and p.suffix == ".sh")
    mix = ", ".join(f"{kinds[k]} {k}" for k in ("python", "shell", "yaml", "manifest", "other") if kinds[k])
    return (
        f"{len(files)} files ({mix}; {launches} test/train_*.sh launch scripts, "
        f"{kinds['gitignore']} .gitignore; {size / 1e6:.0f} MB)"
    )


def _zoo_kind(path: Path) -> str:
    if path.name == ".gitignore":
        return "gitignore"
    if path.suffix in (".yaml", ".yml"):
        return "manifest" if MANIFEST.search(path.read_bytes()) else "yaml"
    return {".py": "python", ".sh": "shell"}.get(path.suffix, "other")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    zoo = sub.add_parser("zoo", help="a model zoo laid out like PyTorch/built-in")
    zoo.add_argument("out_dir", type=Path)
    zoo.add_argument("--files", type=int, default=10000, help="number of files to write")
    zoo.add_argument("--seed", type=int, default=0)
    zoo.add_argument("--git", action="store_true", help="make it a git work tree, every file not ignored added")
    repro = sub.add_parser("gitignore-repro", help="the nested-.gitignore reproduction of issue 11")
    repro.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    if args.what == "gitignore-repro":
        written = write_gitignore_repro(args.out_dir)
        print(f"{args.out_dir}: {len(written)} Python files in {REPRO_FOLDERS} folders")
        return 0
    try:
        written = generate_zoo(args.out_dir, args.files, args.seed)
    except FileExistsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.git:
        make_work_tree(args.out_dir)
    print(f"{args.out_dir}: {describe_zoo(args.out_dir, written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
