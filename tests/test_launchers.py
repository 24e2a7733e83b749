"""Each launcher of launchers/table.py and each place a launch's scale is written, as a user's
repository holds them: scripts shaped like the frameworks' own examples (LLaMA-Factory, ms-swift,
verl, DeepSpeed, accelerate, the Ascend model zoos), linted through the command line. A case says
how the launch is read (launcher, nodes, processes per node, what the Parallel Store advice can ask)
and which findings must and must not be made."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .conftest import run_cli

PINS = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"  # release 6.0.0: ships torch_npu_run, watchdog on
RELEASE = '[tool.recovery-lint.versions]\ntorch = "2.1.0"\ntorch-npu = "2.1.0.post10"\n'


@dataclass
class Launch:
    name: str
    files: dict[str, str]
    launcher: str  # as --show-jobs names it (with the subcommand)
    nodes: int | None = None  # None: not known
    per_node: int | None = None
    parallel_store: str = ""  # a fragment of the Parallel Store line ('' when not checked)
    fire: tuple[str, ...] = ()  # "path:line CODE" findings that must be made
    silent: tuple[str, ...] = ()  # rule codes that must not fire anywhere
    multi_node: str | None = None  # the multi-node premise's status, when checked
    extra: dict[str, str] = field(default_factory=dict)


CASES = [
    # -- the torchrun family -------------------------------------------------------------------------
    Launch(
        "torchrun, static, two nodes",
        {
            "run.sh": "torchrun --nnodes=2 --node_rank=$NODE_RANK --master_addr=$MASTER_ADDR --nproc_per_node=8 train.py\n"
        },
        "torchrun",
        nodes=2,
        per_node=8,
        parallel_store="launch with torch_npu_run",
        fire=("run.sh:1 RL301",),
    ),
    Launch(
        "torch_npu_run already",
        {"run.sh": "torch_npu_run --nnodes=2 --nproc_per_node=8 train.py\n"},
        "torch_npu_run",
        nodes=2,
        per_node=8,
        parallel_store="Parallel Store already",
        silent=("RL301",),
    ),
    Launch(
        "python -m torch.distributed.launch with a default expansion for the nodes",
        {
            "run.sh": "NNODES=${NNODES:-2}\nNPUS_PER_NODE=8\n"
            "python -m torch.distributed.launch --nnodes $NNODES --nproc_per_node $NPUS_PER_NODE train.py\n"
        },
        "torch.distributed.launch",
        nodes=2,
        per_node=8,
        fire=("run.sh:3 RL301",),
    ),
    Launch(
        "one node: no --nnodes",
        {"run.sh": "torchrun --nproc_per_node=8 train.py\n"},
        "torchrun",
        nodes=1,
        per_node=8,
        silent=("RL301",),
        multi_node="failed",
    ),
    # -- scale from every place it is written ------------------------------------------------------
    Launch(
        "a placeholder that is a syntax error does not hide the node count after it",
        {
            "run.sh": "MASTER_ADDR=<master_ip_address>\nMASTER_PORT=6000\nNNODES=2\n"
            "torchrun --nnodes $NNODES --nproc_per_node 8 --master_addr $MASTER_ADDR train.py\n"
        },
        "torchrun",
        nodes=2,
        per_node=8,
        fire=("run.sh:1 RL900", "run.sh:4 RL301"),
    ),
    Launch(
        "the node count is a host list's length: one host or many, unknown",
        {
            "run.sh": "HOSTFILE=/etc/hostfile\nNNODES=$(cat $HOSTFILE | wc -l)\n"
            "torchrun --nnodes $NNODES --nproc_per_node 8 train.py\n"
        },
        "torchrun",
        nodes=None,
        per_node=8,
        silent=("RL301",),
        multi_node="unknown",
    ),
    Launch(
        "the lines of a hostfile are not counted, even beside the script (a script may filter them)",
        {
            "run.sh": "NNODES=$(cat hostfile | wc -l)\ntorchrun --nnodes $NNODES --nproc_per_node 8 train.py\n",
            "hostfile": "10.0.0.1\n10.0.0.2\n",
        },
        "torchrun",
        nodes=None,
        per_node=8,
        multi_node="unknown",
    ),
    Launch(
        "a per-device loop with --world-size 32 and eight processes per node: four nodes",
        {
            "test/train_full_32p.sh": "RANK_SIZE=8\nfor ((i = 0; i < ${RANK_SIZE}; i++)); do\n"
            "  python3 train.py --world-size 32 --rank $i &\ndone\nwait\n",
            "train.py": "import torch\nimport torch_npu\n",
        },
        "python",
        nodes=4,
        per_node=8,
        multi_node="held",
    ),
    Launch(
        "a per-device loop with --world-size 8 is one node",
        {
            "test/train_full_8p.sh": "RANK_SIZE=8\nfor ((i = 0; i < ${RANK_SIZE}; i++)); do\n"
            "  python3 train.py --world-size 8 --rank $i &\ndone\nwait\n",
            "train.py": "import torch\nimport torch_npu\n",
        },
        "python",
        nodes=1,
        per_node=8,
        multi_node="failed",
    ),
    # -- framework commands that run torchrun themselves -------------------------------------------
    Launch(
        "llamafactory-cli train on two nodes (LLaMA-Factory examples/README.md)",
        {
            "run.sh": "FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 MASTER_ADDR=192.168.0.1 MASTER_PORT=29500 \\\n"
            "  llamafactory-cli train examples/train_lora/qwen3_lora_sft.yaml\n",
            "examples/train_lora/qwen3_lora_sft.yaml": "model_name_or_path: Qwen/Qwen3-4B\nstage: sft\ndo_train: true\n",
        },
        "llamafactory-cli train",
        nodes=2,
        parallel_store="run src/llamafactory/launcher.py under torch_npu_run",
        fire=("run.sh:2 RL301",),
    ),
    Launch(
        "llamafactory-cli with an elastic rendezvous (RDZV_ID): no torch_npu_run form",
        {
            "run.sh": "FORCE_TORCHRUN=1 MIN_NNODES=1 MAX_NNODES=3 NNODES=3 RDZV_ID=llamafactory MAX_RESTARTS=3 \\\n"
            "  llamafactory-cli train examples/train_lora/qwen3_lora_sft.yaml\n"
        },
        "llamafactory-cli train",
        nodes=3,
        parallel_store="elastic c10d rendezvous",
        silent=("RL301",),
    ),
    Launch(
        "llamafactory-cli on one node (the visible devices)",
        {"run.sh": "llamafactory-cli train examples/train_qlora/qwen3_lora_sft_bnb_npu.yaml\n"},
        "llamafactory-cli train",
        nodes=1,
        silent=("RL301",),
    ),
    Launch(
        "megatron sft on two Atlas A2 nodes (ms-swift examples/ascend/multi-node/megatron/node1.sh)",
        {
            "node1.sh": "# Atlas A2 * 2 nodes * 8 cards\nASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \\\nNNODES=2 \\\n"
            "NODE_RANK=0 \\\nMASTER_ADDR=127.0.0.1 \\\nMASTER_PORT=29500 \\\nNPROC_PER_NODE=8 \\\n"
            "HCCL_SOCKET_IFNAME=xxx \\\nmegatron sft \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n"
            "    --tensor_model_parallel_size 2 \\\n    --num_train_epochs 1\n"
        },
        "megatron sft",
        nodes=2,
        per_node=8,
        parallel_store="run swift/cli/_megatron/sft.py under torch_npu_run",
        fire=("node1.sh:9 RL301",),
    ),
    Launch(
        "megatron sft given only torch_npu's own variables, its entry setting a CUDA variable "
        "(ms-swift examples/ascend/megatron/train_sft_full.sh)",
        {
            "train_sft_full.sh": "PYTORCH_NPU_ALLOC_CONF='expandable_segments:True' TORCH_HCCL_ZERO_COPY=1 "
            "NPROC_PER_NODE=4 \\\nmegatron sft --model Qwen/Qwen2.5-7B-Instruct --num_train_epochs 1\n",
            "swift/cli/_megatron/sft.py": "import os\n\nos.environ.setdefault('CUDA_DEVICE_MAX_CONNECTIONS', '1')\n",
        },
        "megatron sft",
        nodes=1,
        per_node=4,
        multi_node="failed",
    ),
    Launch(
        "swift sft on one node (NPROC_PER_NODE=4)",
        {
            "train.sh": "NPROC_PER_NODE=4 ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 swift sft \\\n"
            "    --model Qwen/Qwen2-7B-Instruct --dataset AI-ModelScope/alpaca-gpt4-data-zh --num_train_epochs 1\n"
        },
        "swift sft",
        nodes=1,
        per_node=4,
        silent=("RL301",),
        multi_node="failed",
    ),
    Launch(
        "swift sft with a config file only swift reads: no torch_npu_run form",
        {
            "train.sh": "NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 NPROC_PER_NODE=8 swift sft examples/sft.yaml\n",
            "examples/sft.yaml": "model: Qwen/Qwen2.5-7B-Instruct\n",
        },
        "swift sft",
        nodes=2,
        per_node=8,
        parallel_store="takes the training arguments as --flags only",
        silent=("RL301",),
    ),
    # -- launchers with no torchrun command line --------------------------------------------------
    Launch(
        "accelerate launch, two machines from its config file (LLaMA-Factory examples/accelerate)",
        {
            "train.sh": "accelerate launch --config_file examples/accelerate/fsdp_config.yaml src/train.py cfg.yaml\n",
            "examples/accelerate/fsdp_config.yaml": "distributed_type: FSDP\nnum_machines: 2\nnum_processes: 16\n"
            "machine_rank: 0\nrdzv_backend: static\n",
        },
        "accelerate launch",
        nodes=2,
        per_node=8,
        parallel_store="no torchrun command line to replace",
        silent=("RL301",),
        multi_node="held",
    ),
    Launch(
        "accelerate launch with a JSON config (ms-swift examples/ascend/train/qwen3/qwen3_lora_fsdp)",
        {
            "train.sh": "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 accelerate launch --config_file "
            "./examples/fsdp.json swift/cli/sft.py --model Qwen/Qwen3-8B\n",
            "examples/fsdp.json": '{"distributed_type": "FSDP", "num_machines": 1, "num_processes": 8, '
            '"rdzv_backend": "static"}\n',
        },
        "accelerate launch",
        nodes=1,
        per_node=8,
        multi_node="failed",
    ),
    Launch(
        "accelerate launch with its counts as options",
        {
            "train.sh": "accelerate launch --num_machines 2 --machine_rank $RANK --main_process_ip $MASTER_ADDR "
            "--num_processes 16 train.py\n"
        },
        "accelerate launch",
        nodes=2,
        per_node=8,
        multi_node="held",
    ),
    Launch(
        "the deepspeed runner with a hostfile outside the repository: unknown",
        {"run.sh": "deepspeed --hostfile /job/hostfile train.py --deepspeed ds.json\n"},
        "deepspeed",
        nodes=None,
        multi_node="unknown",
    ),
    Launch(
        "the deepspeed runner with a hostfile of four hosts in the repository",
        {
            "run.sh": "deepspeed --hostfile=hostfile --master_addr=10.0.0.1 pretrain.py --deepspeed ds_config.json\n",
            "hostfile": "worker-1 slots=8\nworker-2 slots=8\n# spare\nworker-3 slots=8\nworker-4 slots=8\n",
        },
        "deepspeed",
        nodes=4,
        parallel_store="starts the ranks itself",
        silent=("RL301",),
        multi_node="held",
    ),
    Launch(
        "a host list named host.txt, its path from the repository's root (ms-swift examples/train/multi-node)",
        {
            "examples/multi-node/deepspeed/train.sh": "deepspeed --hostfile=./examples/multi-node/deepspeed/host.txt "
            "train.py --deepspeed ds.json\n",
            "examples/multi-node/deepspeed/host.txt": "worker-0 slots=8\nworker-1 slots=8\n",
        },
        "deepspeed",
        nodes=2,
        multi_node="held",
    ),
    Launch(
        "the deepspeed runner on the local devices it includes",
        {"run.sh": "deepspeed --include localhost:0,1,2,3 train.py --deepspeed ds.json\n"},
        "deepspeed",
        nodes=1,
        multi_node="failed",
    ),
    Launch(
        "a verl trainer with Hydra overrides in an array and a default expansion (verl examples/*_npu.sh)",
        {
            "run.sh": "export HCCL_CONNECT_TIMEOUT=3600\nNNODES=${NNODES:-4}\nNPUS_PER_NODE=${NPUS_PER_NODE:-16}\n"
            'TRAINER=(\n    trainer.nnodes="${NNODES}"\n    trainer.n_gpus_per_node="${NPUS_PER_NODE}"\n'
            "    trainer.device='npu'\n)\npython3 -m verl.trainer.main_ppo \\\n    algorithm.adv_estimator=grpo \\\n"
            '    "${TRAINER[@]}" "$@"\n'
        },
        "verl",
        nodes=4,
        per_node=16,
        parallel_store="Ray actors",
        multi_node="held",
    ),
    Launch(
        "verl submitted to a Ray cluster (ray job submit --)",
        {
            "submit.sh": 'ray job submit --address="http://127.0.0.1:8265" --runtime-env=verl/trainer/runtime_env.yaml '
            "--no-wait -- python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8 trainer.nnodes=2\n"
        },
        "verl",
        nodes=2,
        per_node=8,
    ),
    Launch(
        "OpenRLHF's PPO trainer: the actor group's nodes and devices (OpenRLHF examples/scripts)",
        {
            "train_ppo.sh": "ray job submit --address=http://127.0.0.1:8265 -- python3 -m openrlhf.cli.train_ppo_ray \\\n"
            "   --ref_num_nodes 1 --ref_num_gpus_per_node 8 \\\n   --actor.num_nodes 2 --actor.num_gpus_per_node 8 \\\n"
            "   --vllm_num_engines 4 --pretrain OpenRLHF/Llama-3-8b-sft-mixture\n"
        },
        "openrlhf",
        nodes=2,
        per_node=8,
        parallel_store="Ray actors",
    ),
    Launch(
        "OpenRLHF's PPO trainer with the actor's scale unset: one node of eight",
        {"train_ppo.sh": "python3 -m openrlhf.cli.train_ppo_ray --pretrain m --save_path ./ckpt\n"},
        "openrlhf",
        nodes=1,
        per_node=8,
    ),
    Launch(
        "a program spawning a process per device, its world size the nodes (ModelZoo ResNet50 train_full_16p.sh)",
        {
            "test/train_full_16p.sh": "export RANK_SIZE=16\npython3 ./main.py --multiprocessing-distributed "
            "--world-size 2 --rank $NODE_RANK --dist-backend 'hccl' --epochs 90\n",
            "main.py": "import torch\nimport torch_npu\n",
        },
        "python",
        nodes=2,
        per_node=8,
        multi_node="held",
    ),
    Launch(
        "the same with underscores and a device list, one node (ModelZoo LSTM train_full_8p.sh)",
        {
            "test/train_full_8p.sh": "python3 -u steps/train_ctc.py --rank 0 --world_size 1 --dist_backend 'hccl' "
            "--multiprocessing_distributed --device_list 0,1,2,3,4,5,6,7 --conf conf/ctc.yaml\n",
            "test/steps/train_ctc.py": "import torch\nimport torch_npu\n",
        },
        "python",
        nodes=1,
        per_node=8,
        multi_node="failed",
    ),
    Launch(
        "a device loop over an array of the devices (ModelZoo Transformer train_full_16p.sh)",
        {
            "test/train_full_16p.sh": "export RANK_SIZE=16\nNPUS=($(seq 0 7))\nfor i in ${NPUS[@]}\ndo\n"
            "    export ASCEND_DEVICE_ID=${i}\n    nohup python3 train_8p.py --arch transformer --max-epoch 30 &\n"
            "done\n",
            "train_8p.py": "import torch\nimport torch_npu\n",
        },
        "python",
        nodes=2,
        per_node=8,
        multi_node="held",
    ),
    Launch(
        "a per-device loop under an exported WORLD_SIZE of every rank (ModelZoo Transformer-SSL train_full_16p.sh)",
        {
            "test/train_full_16p.sh": "export RANK_SIZE=8\nexport WORLD_SIZE=16\n"
            "for((RANK_ID=0;RANK_ID<RANK_SIZE;RANK_ID++))\ndo\n    export LOCAL_RANK=$RANK_ID\n"
            "    nohup python3 -u moby_main.py --cfg configs/moby.yaml &\ndone\n",
            "moby_main.py": "import torch\nimport torch_npu\n",
        },
        "python",
        nodes=2,
        per_node=8,
        multi_node="held",
    ),
    Launch(
        "a spawning program on the one device its script is named for (ModelZoo MobileNetV2 train_full_1p.sh)",
        {
            "test/train_full_1p.sh": "python3 main.py --multiprocessing-distributed --world-size 1 "
            "--device-list $ASCEND_DEVICE_ID --epochs 600\n",
            "main.py": "import torch\nimport torch_npu\n",
        },
        "python",
        nodes=1,
        per_node=1,
    ),
    Launch(
        "python -m torch.distributed.run on two nodes",
        {"run.sh": "python -m torch.distributed.run --nnodes=2 --node_rank=$NODE_RANK --nproc_per_node=8 train.py\n"},
        "torch.distributed.run",
        nodes=2,
        per_node=8,
        parallel_store="launch with torch_npu_run",
        fire=("run.sh:1 RL301",),
    ),
    Launch(
        "msrun: every worker over the workers of this node (MindSpore)",
        {
            "run.sh": "msrun --worker_num=16 --local_worker_num=8 --master_addr=$MASTER --master_port=8118 "
            "--node_rank=$RANK --join=True train.py\n",
            "train.py": "import mindspore\n",
        },
        "msrun",
        nodes=2,
        per_node=8,
        silent=("RL301", "RL101"),
    ),
    Launch(
        "mpirun around a Python program: its hosts and processes",
        {"run.sh": "mpirun -np 16 -H node1:8,node2:8 python train.py --epochs 90\n"},
        "python",
        nodes=2,
        per_node=8,
    ),
    Launch(
        "srun around a Python program: its nodes and tasks",
        {
            "job.sh": "#!/bin/bash\n#SBATCH --nodes=2\nsrun -N 2 --ntasks-per-node 8 python train.py --epochs 90\n",
            "train.py": "import torch\nimport torch_npu\n",
        },
        "python",
        nodes=2,
        per_node=8,
        multi_node="held",
    ),
    Launch(
        "a per-device loop inside a loop that runs once (ModelZoo DeepSort train_full_8p.sh: RANK_SIZE=1 "
        "around NPUS=($(seq 0 7))): the innermost loop starts the processes",
        {
            "test/train_full_8p.sh": "#!/bin/bash\nexport RANK_SIZE=1\nRANK_ID_START=0\n"
            "for((RANK_ID=$RANK_ID_START;RANK_ID<$((RANK_SIZE+RANK_ID_START));RANK_ID++));\ndo\n"
            "    NPUS=($(seq 0 7))\n    rank=0\n    for i in ${NPUS[@]}\n    do\n        export RANK=${rank}\n"
            "        python3 deep/train.py --ddp --lr 0.8 > train_${i}.log 2>&1 &\n        let rank++\n    done\ndone\nwait\n",
            "deep/train.py": "import torch\nimport torch_npu\n",
        },
        "python",
        nodes=None,
        per_node=8,
    ),
    Launch(
        "a device id is no process count (ModelZoo FairMOT train_eval_8p.sh: --world_size 1 --gpus '0')",
        {
            "test/train_eval_8p.sh": "python3 track.py mot --exp_id mot17 --world_size 1 --gpus '0'\n",
            "track.py": "import torch\nimport torch_npu\n",
        },
        "python",
        nodes=1,
        per_node=1,
    ),
    Launch(
        "no device is no process count (ESPnet decoding on the CPU: --ngpu 0 with WORLD_SIZE)",
        {
            "run.sh": "export WORLD_SIZE=1\npython3 asr_recog.py --ngpu 0 --batchsize 0\n",
            "asr_recog.py": "import torch\n",
        },
        "python",
        nodes=1,
        per_node=1,
    ),
    Launch(
        "srun running a command line held in a variable (accelerate's Slurm example: srun $CMD)",
        {
            "job.sh": "#!/bin/bash\n#SBATCH --nodes=2\n"
            'export LAUNCHER="torchrun --nnodes 2 --nproc_per_node 8"\n'
            'export CMD="$LAUNCHER train.py --epochs 90"\nsrun $CMD\n',
        },
        "torchrun",
        nodes=2,
        per_node=8,
        parallel_store="launch with torch_npu_run",
        fire=("job.sh:5 RL301",),
    ),
    Launch(
        "srun $CMD whose launcher line is known only in part (accelerate's submit_multinode.sh): "
        "the launch is seen, its arithmetic worked out, the address left to run time",
        {
            "job.sh": "#!/bin/bash\nexport NNODES=2\nexport GPUS_PER_NODE=8\n"
            "head_node_ip=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)\n"
            'export LAUNCHER="accelerate launch \\\n    --num_processes $((NNODES * GPUS_PER_NODE)) \\\n'
            '    --num_machines $NNODES \\\n    --main_process_ip $head_node_ip \\\n    --main_process_port 29500 \\\n    "\n'
            'export SCRIPT="train.py"\nexport CMD="$LAUNCHER $SCRIPT --epochs 90"\nsrun $CMD\n',
            "train.py": "import torch\nimport torch_npu\n",
        },
        "accelerate launch",
        nodes=2,
        per_node=8,
        multi_node="held",
    ),
    Launch(
        "a Slurm batch script: #SBATCH --nodes sets SLURM_NNODES for the launch it starts (OpenRLHF's "
        "train_nonrl_slurm.sh, verl's *_slurm.sh)",
        {
            "job.sh": "#!/bin/bash\n#SBATCH --job-name=sft\n#SBATCH -N 2   # nodes\n#SBATCH --ntasks-per-node=1\n\n"
            "readonly GPUS_PER_NODE=8\n"
            "torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $SLURM_NNODES --node_rank $SLURM_PROCID train.py\n",
            "train.py": "import torch\nimport torch_npu\n",
        },
        "torchrun",
        nodes=2,
        per_node=8,
        multi_node="held",
    ),
    Launch(
        "a node range in #SBATCH --nodes gives no node count",
        {
            "job.sh": "#!/bin/bash\n#SBATCH --nodes=2-4\ntorchrun --nproc_per_node 8 --nnodes $SLURM_JOB_NUM_NODES train.py\n",
            "train.py": "import torch\nimport torch_npu\n",
        },
        "torchrun",
        nodes=None,
        per_node=8,
    ),
    Launch(
        "an #SBATCH line after the first command is a comment (sbatch stops reading there)",
        {
            "job.sh": "#!/bin/bash\nmodule load cann\n#SBATCH --nodes=2\n"
            "torchrun --nproc_per_node 8 --nnodes $SLURM_NNODES train.py\n",
            "train.py": "import torch\nimport torch_npu\n",
        },
        "torchrun",
        nodes=None,
        per_node=8,
    ),
    Launch(
        "a command line held in a variable whose name is not known is no launch",
        {
            "run.sh": 'export CMD="$RUNNER train.py --epochs 90"\nsrun $CMD\ntorchrun --nnodes 1 --nproc_per_node 8 x.py\n'
        },
        "torchrun",
        nodes=1,
        per_node=8,
    ),
    Launch(
        "srun running torchrun in bash -c, in double quotes (OpenRLHF's train_nonrl_slurm.sh)",
        {
            "job.sh": "#!/bin/bash\nreadonly GPUS_PER_NODE=8\n"
            'srun --container-image="$IMAGE" bash -c " cd /openrlhf; pip install . ; torchrun \\\n'
            '--nproc_per_node $GPUS_PER_NODE --nnodes 2 --node_rank $SLURM_PROCID train.py"\n',
        },
        "torchrun",
        nodes=2,
        per_node=8,
        parallel_store="launch with torch_npu_run",
        fire=("job.sh:3 RL301",),
    ),
    Launch(
        "bash -c in single quotes: only exported variables reach the text",
        {"run.sh": "NPROC=8\nbash -c 'torchrun --nnodes 2 --nproc_per_node $NPROC train.py'\n"},
        "torchrun",
        nodes=2,
        per_node=None,
    ),
]


def _lint(tmp_path: Path, case: Launch, *args: str):
    for name, text in {**case.files, **case.extra}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "recovery-lint.toml").write_text(RELEASE.replace("[tool.recovery-lint.versions]", "[versions]"))
    (tmp_path / ".git").mkdir(exist_ok=True)
    return run_cli("--no-cache", *args, ".", cwd=tmp_path)


def _launch(jobs: dict, case: Launch) -> dict:
    launches = [
        launch
        for job in jobs["jobs"]
        for launch in job["launches"]
        if " ".join(filter(None, (launch["launcher"], launch["subcommand"]))) == case.launcher
    ]
    assert launches, f"no {case.launcher} launch in {[j['launches'] for j in jobs['jobs']]}"
    return launches[0]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_launch_is_read_as_its_launcher_starts_it(tmp_path, case):
    shown = _lint(tmp_path, case, "--show-jobs", "--output-format", "json")
    assert shown.returncode == 0, shown.stderr
    jobs = json.loads(shown.stdout)
    launch = _launch(jobs, case)
    assert launch["nodes"] == case.nodes, launch["scale"]
    if case.per_node is not None:
        assert launch["processes_per_node"] == case.per_node, launch["scale"]
    if case.parallel_store:
        assert case.parallel_store in (launch["parallel_store"] or ""), launch["parallel_store"]
    if case.multi_node is not None:
        job = next(j for j in jobs["jobs"] if launch in j["launches"])
        assert job["premises"]["multi-node"]["status"] == case.multi_node, job["premises"]["multi-node"]


@pytest.mark.parametrize("case", [c for c in CASES if c.fire or c.silent], ids=lambda c: c.name)
def test_the_findings_fit_the_launcher(tmp_path, case):
    result = _lint(tmp_path, case, "--output-format", "concise")
    found = {
        f"{line.split(':')[0]}:{line.split(':')[1]} {line.split()[1]}"
        for line in result.stdout.splitlines()
        if ": RL" in line
    }
    for expected in case.fire:
        assert expected in found, result.stdout
    for code in case.silent:
        assert not any(f.endswith(f" {code}") for f in found), result.stdout


def test_a_framework_launch_gets_advice_it_can_follow_and_no_fix(tmp_path):
    case = CASES[
        [c.name for c in CASES].index(
            "megatron sft on two Atlas A2 nodes (ms-swift examples/ascend/multi-node/megatron/node1.sh)"
        )
    ]
    result = _lint(tmp_path, case, "--output-format", "full")
    assert "run swift/cli/_megatron/sft.py under torch_npu_run to use the Parallel Store" in result.stdout
    assert "No fix" in result.stdout
    fixed = _lint(tmp_path, case, "--fix", "--unsafe-fixes")
    assert (tmp_path / "node1.sh").read_text() == case.files["node1.sh"], fixed.stdout


def test_a_launch_in_a_bash_c_string_is_judged_and_its_text_takes_no_edit(tmp_path):
    """The script ``bash -c`` runs is text inside another command's quotes: its launch and exports
    are judged where they are written, and no fix edits them (an edit could break the quoting); an
    export of the script around it reaches the text's launch and is edited as before."""
    inner = "srun -N 2 bash -c 'export HCCL_ASYNC_ERROR_HANDLING=0; torchrun --nnodes 2 train.py'\n"
    outer = "export HCCL_ASYNC_ERROR_HANDLING=0\nsrun -N 2 bash -c 'torchrun --nnodes 2 train.py'\n"
    case = Launch("inline", {"inner.sh": inner, "outer.sh": outer}, "torchrun")
    result = _lint(tmp_path, case, "--output-format", "concise")
    found = sorted(" ".join(line.split(" ")[:2]) for line in result.stdout.splitlines() if ": RL" in line)
    assert found == [
        "inner.sh:1:27: RL101",
        "inner.sh:1:56: RL301",
        "outer.sh:1:8: RL101",
        "outer.sh:2:20: RL301",
    ], result.stdout
    _lint(tmp_path, case, "--fix", "--unsafe-fixes")
    assert (tmp_path / "inner.sh").read_text() == inner
    assert (tmp_path / "outer.sh").read_text() == outer.replace("=0", "=1")


def test_a_bash_c_inside_a_manifest_script_is_read_where_its_positions_are_the_files(tmp_path):
    """A container's block script (literal or folded) running ``bash -c '...'`` has that text read
    where it is written; a quoted YAML scalar with escapes, whose words only point at the scalar,
    is not read for it."""
    head = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n  containers:\n  - name: c\n"
        "    image: pytorch-npu\n    command: [bash, -c]\n    args:\n"
    )
    inner = "srun -N 2 bash -c 'torchrun --nnodes 2 --nproc_per_node 8 train.py'"
    for args, seen in (
        (f"    - |\n      {inner}\n", True),
        (f"    - >\n      {inner}\n", True),
        (f'    - "{inner} \\"$X\\""\n', False),
    ):
        case = Launch(args, {"job.yaml": head + args}, "torchrun")
        shown = json.loads(_lint(tmp_path, case, "--show-jobs", "--output-format", "json").stdout)
        launchers = [launch["launcher"] for job in shown["jobs"] for launch in job["launches"]]
        assert ("torchrun" in launchers) == seen, (args, launchers)


def test_exports_do_not_reach_ray_actors_started_elsewhere(tmp_path):
    """The driver's exports stay with the driver: Ray actors see their raylet's environment."""
    script = (
        "export HCCL_ASYNC_ERROR_HANDLING=0\n"
        "python3 -m verl.trainer.main_ppo trainer.nnodes=4 trainer.n_gpus_per_node=16 trainer.device=npu\n"
    )
    case = Launch("verl", {"run.sh": script}, "verl")
    result = _lint(tmp_path, case, "--output-format", "concise")
    assert "RL101" not in result.stdout
    shown = json.loads(_lint(tmp_path, case, "--show-jobs", "--output-format", "json").stdout)
    assert "with no `ray start` in this script" in _launch(shown, case)["ranks_environment"]


def test_exports_before_ray_start_reach_the_actors_it_hosts(tmp_path):
    script = (
        "export HCCL_ASYNC_ERROR_HANDLING=0\nray start --head --port 6379\n"
        "python3 -m verl.trainer.main_ppo trainer.nnodes=4 trainer.n_gpus_per_node=16 trainer.device=npu\n"
    )
    case = Launch("verl", {"run.sh": script}, "verl")
    result = _lint(tmp_path, case, "--output-format", "concise")
    assert "run.sh:1:" in result.stdout and "RL101" in result.stdout, result.stdout


def test_the_readme_table_names_every_launcher_with_its_source():
    from recovery_lint.launchers.table import LAUNCHERS, MPIRUN, SRUN

    from .conftest import ROOT

    readme = (ROOT / "README.md").read_text("utf-8")
    table = readme.split("### Launchers", 1)[1].split("\n\n| launcher", 1)[1].split("\n\n", 1)[0]
    for row in (*LAUNCHERS, SRUN, MPIRUN):
        assert row.name in table, row.name
        cited = next((w for w in row.source.split() if "/" in w and "." in w.rsplit("/", 1)[-1]), None)
        if cited is not None:
            assert cited.rstrip(",:;") in table.replace("`", ""), (row.name, cited)


def test_a_runtime_env_the_repository_does_not_hold_leaves_the_ranks_environment_unknown(tmp_path):
    script = (
        "export HCCL_ASYNC_ERROR_HANDLING=0\nray start --head --port 6379\n"
        "ray job submit --runtime-env=recipe/config/runtime_env.yaml -- python3 -m verl.trainer.main_ppo "
        "trainer.nnodes=4 trainer.n_gpus_per_node=16\n"
    )
    case = Launch("verl", {"run.sh": script, "runtime_env.yaml": "env_vars:\n  HCCL_CONNECT_TIMEOUT: '600'\n"}, "verl")
    result = _lint(tmp_path, case, "--output-format", "concise")
    assert "RL101" not in result.stdout, result.stdout
    shown = json.loads(_lint(tmp_path, case, "--show-jobs", "--output-format", "json").stdout)
    assert "does not show" in _launch(shown, case)["ranks_environment"]


def test_an_npu_route_not_followed_is_not_called_absent(tmp_path):
    """Without anything else saying the job runs on NPUs the entry's imports are not followed: the
    premise says so rather than that no imported module loads torch_npu."""
    files = {
        "train.sh": "torchrun --nproc_per_node 8 train.py\n",
        "train.py": "import torch\nfrom util.dist import init\n\ninit()\n",
        "util/__init__.py": "",
        "util/dist.py": "import torch_npu\n",
    }
    plain = _show_jobs(tmp_path, files)
    assert "premise npu-entry: failed (no entry of the job imports torch_npu itself (the modules" in plain
    files["train.sh"] = "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n" + files["train.sh"]
    shown = _show_jobs(tmp_path, files)
    assert "premise npu-entry: held (train.py imports util/dist.py (line 2), which loads torch_npu)" in shown


def test_a_folder_below_one_computed_at_run_time_is_the_launch_folder(tmp_path):
    """ModelZoo's scripts compute their model folder (cur_path=`pwd`) and cd below it: the entry is
    found in that folder of the repository."""
    files = {
        "Net_for_PyTorch/test/train_full_8p.sh": 'cur_path=`pwd`\nif [ x"${cur_path##*/}" == x"test" ]; then\n'
        "    cd ..\n    cur_path=`pwd`\nfi\ncd $cur_path/references/classification\n"
        "python3 -m torch.distributed.launch --nproc_per_node 8 train.py --epochs 90\n",
        "Net_for_PyTorch/references/classification/train.py": "import torch\nimport torch_npu\n",
        "Net_for_PyTorch/test/cd_up.sh": "cd $cur_path/../other\npython3 train.py\n",
    }
    shown = _show_jobs(tmp_path, files)
    assert "-> entry Net_for_PyTorch/references/classification/train.py [training" in shown, shown
    assert "premise npu-entry: held (Net_for_PyTorch/references/classification/train.py imports torch_npu)" in shown
    assert "other/train.py" not in shown  # a path climbing above the unknown folder is not guessed


def _show_jobs(tmp_path: Path, files: dict[str, str]) -> str:
    """``--show-jobs`` on the files as a repository, with no configuration."""
    return run_cli("--isolated", "--no-cache", "--show-jobs", ".", cwd=_repository(tmp_path, files)).stdout


def _repository(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_the_job_header_names_the_platform_the_configuration_declares(tmp_path):
    (tmp_path / "recovery-lint.toml").write_text('[target]\nplatform = "ascend-910b"\n')
    shown = run_cli("--no-cache", "--show-jobs", "train.sh", cwd=_repository(tmp_path, {"train.sh": "torchrun t.py\n"}))
    assert "  platform: ascend-910b (target.platform); framework:" in shown.stdout, shown.stdout


def test_a_loop_over_an_array_that_names_itself_is_not_counted(tmp_path):
    files = {"train_full_8p.sh": "NPUS=(${NPUS[@]})\nfor i in ${NPUS[@]}\ndo\n  python3 train.py &\ndone\n"}
    shown = run_cli("--isolated", "--no-cache", "--show-jobs", ".", cwd=_repository(tmp_path, files))
    assert shown.returncode == 0 and "internal error" not in shown.stderr, shown.stderr
    assert "x 8 process(es) per node (the script name (8p))" in shown.stdout, shown.stdout


# the official samples' shared start script, cut down: an executor picked at run time runs the entry
# bound from $3, in a branch per framework that the container's `framework` variable picks
_SHARED_START = """\
#!/bin/bash
app_url="$(readlink -f "$1")/"
boot_file="$3"
train_param="${@:4}"
DLS_PROGRAM_EXECUTOR="$(which python)"
if [ "${framework}" == "PyTorch" ]; then
  ${DLS_PROGRAM_EXECUTOR} ${app_url}${boot_file} ${train_param} --multiprocessing-distributed
elif [ "${framework}" == "MindSpore" ]; then
  ${DLS_PROGRAM_EXECUTOR} ${app_url}${boot_file} ${train_param}
fi
"""


def _sample_job(framework: str | None) -> str:
    env = f'          env:\n          - name: framework\n            value: "{framework}"\n' if framework else ""
    return (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: resnet\n  labels:\n"
        '    ring-controller.atlas: ascend-910b\n    fault-scheduling: "grace"\n'
        "spec:\n  tasks:\n  - name: default\n    replicas: 2\n    template:\n      spec:\n        containers:\n"
        "        - name: train\n          image: torch:latest\n"
        '          command: ["/bin/bash", "-c", "bash /job/code/train_start.sh /job/code/ /job/output/ main.py --epochs=90"]\n'
        f"{env}"
    )


@pytest.mark.parametrize(
    ("framework", "launches"),
    [
        ("PyTorch", ["train_start.sh:7"]),  # the PyTorch branch only
        ("MindSpore", ["train_start.sh:9"]),  # the MindSpore branch only
        (None, []),  # the variable is not known: neither branch is taken for a launch known by a path's end
    ],
)
def test_a_branch_the_known_framework_rules_out_holds_no_launch(tmp_path, framework, launches):
    out = _show_jobs(tmp_path, {"job.yaml": _sample_job(framework), "train_start.sh": _SHARED_START})
    seen = sorted(
        line.split(" at ", 1)[1].split(" ", 1)[0] for line in out.splitlines() if line.strip().startswith("launch ")
    )
    assert seen == launches, out
    repo = _repository(tmp_path / "lint", {"job.yaml": _sample_job(framework), "train_start.sh": _SHARED_START})
    found = json.loads(run_cli("--isolated", "--output-format", "json", ".", cwd=repo).stdout)
    resume = sorted(f"{f['path']}:{f['line']}" for f in found if f["code"] == "RL103")
    assert resume == (["train_start.sh:7"] if framework == "PyTorch" else []), found


@pytest.mark.parametrize(
    ("script", "launches"),
    [
        # a value an if branch may have changed decides nothing: the launch may run
        (
            'framework=PyTorch\nif [ -n "$X" ]; then\n  framework=MindSpore\nfi\n'
            'if [ "$framework" == "PyTorch" ]; then\n  torchrun --nnodes 2 --nproc_per_node 8 train.py\nfi\n',
            1,
        ),
        # inside a function $1 is the function's argument, not the script's
        (
            'run() {\n  if [ "$1" == "go" ]; then\n    torchrun --nnodes 2 --nproc_per_node 8 train.py\n  fi\n}\nrun go\n',
            1,
        ),
        # a value set for certain rules the branch out
        (
            'framework=MindSpore\nif [ "$framework" == "PyTorch" ]; then\n  torchrun --nnodes 2 --nproc_per_node 8 train.py\nfi\n',
            0,
        ),
    ],
)
def test_only_a_value_set_for_certain_decides_a_branch(tmp_path, script, launches):
    out = _show_jobs(tmp_path, {"run.sh": "#!/bin/bash\n" + script, "train.py": "import torch\nimport torch_npu\n"})
    assert sum(1 for line in out.splitlines() if line.startswith("    launch ")) == launches, out


def test_a_script_sourced_by_a_name_held_in_a_variable_is_read(tmp_path):
    """``source ./${training_script}`` (OpenRLHF's train_nonrl_slurm.sh) names the file through a
    variable: the file is read, and what it exports reaches the launch."""
    case = Launch(
        "source through a variable",
        {
            "job.sh": 'readonly env_script="env.sh"\nsource ./${env_script} slurm\n'
            "torchrun --nnodes 2 --nproc_per_node 8 train.py\n",
            "env.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\n",
            "train.py": "import torch\nimport torch_npu\n",
        },
        "torchrun",
    )
    shown = _lint(tmp_path, case, "--show-jobs", "--output-format", "json")
    job = next(j for j in json.loads(shown.stdout)["jobs"] if j["launches"])
    assert job["premises"]["launch-environment"]["status"] == "held", job["premises"]["launch-environment"]
    result = _lint(tmp_path, case, "--output-format", "concise")
    assert "env.sh:1:8: RL101" in result.stdout, result.stdout


def test_the_tasks_of_an_srun_around_a_ray_driver_are_not_its_ranks(tmp_path):
    """verl's Slurm scripts start the trainer's driver with ``srun --nodes=$NNODES --ntasks=1``: the
    one task is the driver, the ranks are Ray actors. The srun gives no process count there (it does
    around a plain Python program, where each task is a rank)."""
    case = Launch(
        "srun around a Ray driver",
        {
            "run.sh": "#!/bin/bash\n#SBATCH --nodes=1\nNNODES=${SLURM_JOB_NUM_NODES}\n"
            'srun --overlap --nodes=${NNODES} --ntasks=1 -w "$head_node" \\\n'
            "    python -m verl.trainer.main_ppo trainer.n_gpus_per_node=$SLURM_GPUS_PER_NODE "
            "trainer.nnodes=$NNODES trainer.experiment_name=sapo\n",
        },
        "verl",
    )
    shown = _lint(tmp_path, case, "--show-jobs", "--output-format", "json")
    jobs = json.loads(shown.stdout)
    launch = _launch(jobs, case)
    assert launch["nodes"] == 1 and launch["processes_per_node"] is None, launch["scale"]
    job = next(j for j in jobs["jobs"] if launch in j["launches"])
    assert job["judged"] is True and job["role"] == "training", job["reason"]
