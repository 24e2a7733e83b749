"""The launchers a training launch goes through, one row each: how a command is recognised as it,
where its node count and processes per node are written, what its ranks run and whether they see
the launching shell's environment, and what the Parallel Store advice can ask of it. Each row cites
the source that shows it. Adding a launcher is a row here and its cases in tests/test_launchers.py.
"""

from __future__ import annotations

from dataclasses import dataclass

# the families a rule asks about
TORCHRUN = "torchrun"  # torchrun and python -m torch.distributed.run / .launch: the TCPStore rendezvous
TORCH_NPU_RUN = "torch_npu_run"  # torch_npu's launcher: the Parallel Store
DEEPSPEED = "deepspeed"  # DeepSpeed's runner: starts the ranks itself (env:// rendezvous)
FRAMEWORK = "framework"  # a framework's command that builds and runs a torchrun command itself
ACCELERATE = "accelerate"  # accelerate launch: torch.distributed.run in its own process
RAY = "ray"  # a Ray trainer: the ranks are Ray actors, on the nodes of a Ray cluster
MPI = "mpi"  # srun / mpirun starting one process per rank
MINDSPORE = "mindspore"  # msrun
PYTHON = "python"  # a Python program started as it is (one process, or a per-device loop)

# where the ranks' environment comes from
INHERIT = "inherit"  # a child of the launching shell: every export reaches the ranks
RAY_WORKERS = "ray-workers"  # Ray actors: they see the environment their raylet was started with


@dataclass(eq=False)
class Count:
    """Where a launcher's count (of nodes, or of processes per node) is written, in the order read:
    its options, the launch environment, Hydra overrides, a file the launch names (a hostfile, a
    config file), then the default. ``default`` is None when the launcher decides at run time (a
    device count)."""

    flags: tuple[str, ...] = ()  # --nnodes 2 / --nnodes=2 (an elastic MIN:MAX reads as MAX)
    env: tuple[str, ...] = ()  # NNODES=2 in the environment the launcher reads
    hydra: tuple[str, ...] = ()  # trainer.nnodes=2
    hostfile: tuple[str, ...] = ()  # options naming a file of "host slots=N" lines: its hosts count
    hosts: tuple[str, ...] = ()  # options listing hosts (host1:0,1@host2, or host1,host2): their number
    config: tuple[str, ...] = ()  # keys of the YAML/JSON config file the launch names (config_flags)
    default: int | None = None
    default_note: str = ""  # where the default comes from


UNCOUNTED = Count()  # a launcher that says nothing about this count


@dataclass(eq=False)
class Launcher:
    """One row of the launcher table: how a launcher is spelled and how it reads its scale."""

    name: str  # as findings and --show-jobs name it
    family: str
    commands: tuple[str, ...] = ()  # program names that start it
    modules: tuple[str, ...] = ()  # python -m MODULE that starts it
    module_suffixes: tuple[str, ...] = ()  # python -m PKG.MODULE whose last part is one of these
    subcommands: tuple[str, ...] = ()  # the subcommands that train (others are no training launch)
    nodes: Count = UNCOUNTED
    per_node: Count = UNCOUNTED
    total: Count = UNCOUNTED  # processes in all (the per-node count is then total / nodes)
    config_flags: tuple[str, ...] = ()  # options naming a config file read for counts
    # options that take a value: the entry is the first positional after the launcher's own options
    value_options: frozenset[str] = frozenset()
    # what the ranks run: "script" (the entry the command names), or the framework's own module
    # (a path below the repository, with {sub} for the subcommand)
    runs: str = "script"
    ranks_env: str = INHERIT
    # what the Parallel Store advice asks of a launch through this launcher, with {module} for the
    # module the ranks run, and how ('' : nothing, and no_parallel_store says why)
    parallel_store: str = ""
    parallel_store_how: str = ""
    no_parallel_store: str = ""
    # a framework's: a first argument with one of these endings is a config file only its own command
    # reads (its rank module takes the training arguments as --flags)
    cli_configs: tuple[str, ...] = ()
    # a framework's: variables that switch its torchrun to an elastic c10d rendezvous
    elastic_env: tuple[str, ...] = ()
    source: str = ""  # the source file and lines that show how the launcher starts the ranks

    @property
    def torch(self) -> bool:
        """A launch whose ranks a torchrun-style agent starts (the rendezvous RL301 is about)."""
        return self.family in (TORCHRUN, TORCH_NPU_RUN, FRAMEWORK)

    @property
    def distributed(self) -> bool:
        """A launcher that starts a PyTorch process group over several devices."""
        return self.family in (TORCHRUN, TORCH_NPU_RUN, DEEPSPEED, FRAMEWORK, ACCELERATE, RAY)


# torchrun's options that take a value (torch/distributed/run.py get_args_parser); torch_npu_run
# reuses that parser (torch_npu/distributed/run.py)
_TORCHRUN_VALUES = frozenset(
    {
        *("--nnodes", "--nproc_per_node", "--nproc-per-node", "--node_rank", "--node-rank", "--master_addr"),
        *("--master-addr", "--master_port", "--master-port", "--rdzv_backend", "--rdzv-backend"),
        *("--rdzv_endpoint", "--rdzv-endpoint", "--rdzv_id", "--rdzv-id", "--rdzv_conf", "--rdzv-conf"),
        *("--max_restarts", "--max-restarts", "--monitor_interval", "--monitor-interval", "--start_method"),
        *("--start-method", "--role", "--log_dir", "--log-dir", "-r", "--redirects", "-t", "--tee"),
        *("--local_addr", "--local-addr", "--logs_specs", "--logs-specs", "--local-ranks-filter"),
        "--enable_tiered_parallel_tcpstore",
    }
)
_TORCH_NODES = Count(flags=("--nnodes",), default=1, default_note="without --nnodes")
_TORCH_PER_NODE = Count(flags=("--nproc_per_node", "--nproc-per-node"))
_SWAP = "launch with torch_npu_run"
_TORCH_SOURCE = "pytorch torch/distributed/run.py (static rendezvous: a TCPStore on the master)"

TORCHRUN_ROW = Launcher(
    "torchrun",
    TORCHRUN,
    commands=("torchrun",),
    nodes=_TORCH_NODES,
    per_node=_TORCH_PER_NODE,
    value_options=_TORCHRUN_VALUES,
    parallel_store=_SWAP,
    source=_TORCH_SOURCE,
)
DISTRIBUTED_RUN = Launcher(
    "torch.distributed.run",
    TORCHRUN,
    modules=("torch.distributed.run",),
    nodes=_TORCH_NODES,
    per_node=_TORCH_PER_NODE,
    value_options=_TORCHRUN_VALUES,
    parallel_store=_SWAP,
    source=_TORCH_SOURCE,
)
DISTRIBUTED_LAUNCH = Launcher(
    "torch.distributed.launch",
    TORCHRUN,
    modules=("torch.distributed.launch",),
    nodes=_TORCH_NODES,
    per_node=_TORCH_PER_NODE,
    value_options=_TORCHRUN_VALUES,
    parallel_store=_SWAP,
    source=_TORCH_SOURCE,
)
TORCH_NPU_RUN_ROW = Launcher(
    "torch_npu_run",
    TORCH_NPU_RUN,
    commands=("torch_npu_run",),
    modules=("torch_npu.distributed.run",),
    nodes=_TORCH_NODES,
    per_node=_TORCH_PER_NODE,
    value_options=_TORCHRUN_VALUES,
    source="Ascend/pytorch torch_npu/distributed/run.py:10-30 (forces the parallel rendezvous)",
)
DEEPSPEED_ROW = Launcher(
    "deepspeed",
    DEEPSPEED,
    commands=("deepspeed",),
    modules=("deepspeed.launcher.runner",),
    nodes=Count(
        flags=("--num_nodes", "--num-nodes"),
        hostfile=("--hostfile", "-H"),
        hosts=("--include", "-i"),
        default=1,
        default_note="without --num_nodes or a hostfile (the local node)",
    ),
    per_node=Count(flags=("--num_gpus", "--num-gpus", "--num_accelerators")),
    value_options=frozenset(
        {
            *("--hostfile", "-H", "--include", "-i", "--exclude", "-e", "--num_nodes", "--num-nodes"),
            *("--num_gpus", "--num-gpus", "--num_accelerators", "--master_port", "--master_addr", "--node_rank"),
            *("--launcher", "--launcher_args", "--min_elastic_nodes", "--max_elastic_nodes", "--ssh_port"),
            *("--enable_each_rank_log", "--autotuning", "--bind_core_list", "--venv_script", "--log_level"),
        }
    ),
    no_parallel_store=(
        "the DeepSpeed runner starts the ranks itself (deepspeed.launcher.launch on each node, an env:// "
        "rendezvous): it has no torchrun command line to replace"
    ),
    source="deepspeedai/DeepSpeed deepspeed/launcher/runner.py:53-225, 466-545 (hostfile, --num_nodes, --include)",
)
OPENRLHF = Launcher(
    "openrlhf",
    RAY,
    modules=("openrlhf.cli.train_ppo_ray",),
    # the actor group's placement: num_nodes * num_gpus_per_node Ray bundles; the other groups
    # (reference, critic, reward, vLLM engines) take their own
    nodes=Count(flags=("--actor.num_nodes", "--actor_num_nodes"), default=1, default_note="train_ppo_ray.py:200-216"),
    per_node=Count(
        flags=("--actor.num_gpus_per_node", "--actor_num_gpus_per_node"),
        default=8,
        default_note="train_ppo_ray.py:200-216",
    ),
    ranks_env=RAY_WORKERS,
    no_parallel_store="the ranks are Ray actors that form their process group themselves: no torchrun rendezvous",
    source="OpenRLHF openrlhf/cli/train_ppo_ray.py:200-216 (--actor.num_nodes x --actor.num_gpus_per_node Ray "
    "bundles), openrlhf/trainer/ray/launcher.py:28-36 (the ranks' environment)",
)
MSRUN = Launcher(
    "msrun",
    MINDSPORE,
    commands=("msrun",),
    per_node=Count(flags=("--local_worker_num",)),
    total=Count(flags=("--worker_num",)),
    value_options=frozenset({"--worker_num", "--local_worker_num", "--master_addr", "--master_port", "--node_rank"}),
    source="MindSpore msrun",
)
LLAMAFACTORY = Launcher(
    "llamafactory-cli",
    FRAMEWORK,
    commands=("llamafactory-cli", "lmf"),
    subcommands=("train", "sft", "dpo", "rm"),
    # an elastic launch (RDZV_ID) spans up to MAX_NNODES (launcher.py:85-112)
    nodes=Count(env=("NNODES", "MAX_NNODES"), default=1, default_note="NNODES unset (launcher.py:64: '1')"),
    per_node=Count(env=("NPROC_PER_NODE",), default_note="NPROC_PER_NODE unset: the node's device count"),
    runs="src/llamafactory/launcher.py",
    elastic_env=("RDZV_ID",),  # launcher.py:85-112: --rdzv-backend c10d, elastic MIN_NNODES:MAX_NNODES
    parallel_store="run {module} under torch_npu_run",
    parallel_store_how=(
        "LLaMA-Factory's llamafactory-cli starts torchrun itself (launcher.py:115-132); torch_npu_run "
        "takes the same options and the config: torch_npu_run --nnodes N --node_rank R --nproc_per_node P "
        "--master_addr A --master_port PORT {module} CONFIG.yaml"
    ),
    source="hiyouga/LLaMA-Factory src/llamafactory/launcher.py:56-134 (FORCE_TORCHRUN/NNODES/NODE_RANK -> torchrun)",
)
SWIFT = Launcher(
    "swift",
    FRAMEWORK,
    commands=("swift",),
    subcommands=("pt", "sft", "rlhf"),
    nodes=Count(env=("NNODES",), default=1, default_note="NNODES unset"),
    per_node=Count(env=("NPROC_PER_NODE",), default=1, default_note="NPROC_PER_NODE unset (one process)"),
    runs="swift/cli/{sub}.py",
    # main.py:38-71 reads a YAML/JSON config before building the torchrun command; the rank scripts
    # parse --flags with HfArgumentParser (swift/pipelines/base.py:35-40 rejects a positional file)
    cli_configs=(".yaml", ".yml", ".json"),
    parallel_store="run {module} under torch_npu_run",
    parallel_store_how=(
        "The swift command of ms-swift starts python -m torch.distributed.run itself (main.py:74-102); give "
        "torch_npu_run the same counts (--nnodes, --node_rank, --nproc_per_node, --master_addr, "
        "--master_port) and {module} the training arguments as --flags"
    ),
    source="modelscope/ms-swift swift/cli/main.py:30-35, 74-102 (get_torchrun_args)",
)
MEGATRON_SWIFT = Launcher(
    "megatron",
    FRAMEWORK,
    commands=("megatron",),
    subcommands=("pt", "sft", "rlhf"),
    nodes=Count(env=("NNODES",), default=1, default_note="NNODES unset"),
    per_node=Count(env=("NPROC_PER_NODE",), default=1, default_note="NPROC_PER_NODE unset (one process)"),
    runs="swift/cli/_megatron/{sub}.py",
    # main.py:38-71 reads a YAML/JSON config before building the torchrun command; the rank scripts
    # parse --flags with HfArgumentParser (swift/pipelines/base.py:35-40 rejects a positional file)
    cli_configs=(".yaml", ".yml", ".json"),
    parallel_store="run {module} under torch_npu_run",
    parallel_store_how=(
        "The megatron command of ms-swift starts python -m torch.distributed.run itself (main.py:74-102); give "
        "torch_npu_run the same counts (--nnodes, --node_rank, --nproc_per_node, --master_addr, "
        "--master_port) and {module} the training arguments as --flags"
    ),
    source="modelscope/ms-swift swift/cli/_megatron/main.py:6-15, swift/cli/main.py:74-102",
)
ACCELERATE_ROW = Launcher(
    "accelerate",
    ACCELERATE,
    commands=("accelerate",),
    subcommands=("launch",),
    # not given: accelerate reads the machine's own default config (~/.cache/huggingface/accelerate)
    nodes=Count(
        flags=("--num_machines", "--num-machines"),
        config=("num_machines",),
        default_note="not given: the default config of the machine that runs it decides",
    ),
    total=Count(flags=("--num_processes", "--num-processes"), config=("num_processes",)),
    config_flags=("--config_file", "--config-file"),
    value_options=frozenset(
        {
            *("--config_file", "--config-file", "--num_processes", "--num-processes", "--num_machines"),
            *("--num-machines", "--machine_rank", "--machine-rank", "--main_process_ip", "--main_process_port"),
            *("--mixed_precision", "--gpu_ids", "--rdzv_backend", "--rdzv_conf", "--max_restarts"),
            *("--monitor_interval", "--deepspeed_config_file", "--zero_stage", "--deepspeed_hostfile"),
            *("--deepspeed_multinode_launcher", "--num_cpu_threads_per_process", "--dynamo_backend", "-t", "--tee"),
            *("--log_dir", "--role", "--fsdp_sharding_strategy", "--gradient_accumulation_steps"),
        }
    ),
    no_parallel_store=(
        "accelerate launch calls torch.distributed.run inside its own process: it has no torchrun command "
        "line to replace"
    ),
    source="huggingface/accelerate src/accelerate/utils/launch.py:216-228 (nproc_per_node = num_processes // "
    "num_machines), commands/launch.py:998-1023 (torch.distributed.run in its own process)",
)
VERL = Launcher(
    "verl",
    RAY,
    modules=("verl.trainer.main_ppo", "verl.trainer.sft_trainer_ray"),
    module_suffixes=("main_ppo", "main_dapo", "main_grpo", "fully_async_main"),
    nodes=Count(hydra=("trainer.nnodes",), default=1, default_note="ppo_trainer.yaml:153"),
    per_node=Count(hydra=("trainer.n_gpus_per_node",), default=8, default_note="ppo_trainer.yaml:156"),
    ranks_env=RAY_WORKERS,
    no_parallel_store="the ranks are Ray actors that form their process group themselves: no torchrun rendezvous",
    source="volcengine/verl verl/trainer/main_ppo.py:77, 203-205 ([n_gpus_per_node] * nnodes Ray placement "
    "groups); verl/trainer/constants_ppo.py:20-40 (the variables it passes to the workers)",
)
SRUN = Launcher(
    "srun",
    MPI,
    commands=("srun",),
    nodes=Count(flags=("-N", "--nodes")),
    per_node=Count(flags=("--ntasks-per-node",)),
    total=Count(flags=("-n", "--ntasks")),
    source="Slurm srun (one process per task)",
)
MPIRUN = Launcher(
    "mpirun",
    MPI,
    commands=("mpirun", "mpiexec"),
    nodes=Count(hosts=("-H", "--host", "-host"), hostfile=("--hostfile", "-hostfile", "-machinefile")),
    per_node=Count(flags=("-npernode", "--npernode", "-N", "-ppn")),
    total=Count(flags=("-np", "-n", "--np", "-c")),
    source="Open MPI / MPICH mpirun (one process per rank)",
)

# the order a command is matched in: the first row that takes it
LAUNCHERS: tuple[Launcher, ...] = (
    TORCHRUN_ROW,
    DISTRIBUTED_RUN,
    DISTRIBUTED_LAUNCH,
    TORCH_NPU_RUN_ROW,
    DEEPSPEED_ROW,
    MSRUN,
    LLAMAFACTORY,
    SWIFT,
    MEGATRON_SWIFT,
    ACCELERATE_ROW,
    VERL,
    OPENRLHF,
)
# srun and mpirun start a launch of their own (the command after their options): they give it its scale
WRAPPER_LAUNCHERS = {name: row for row in (SRUN, MPIRUN) for name in row.commands}
PYTHON_ROW = Launcher(
    "python", PYTHON, value_options=frozenset({"-W", "-X"}), source="a Python program started as it is"
)
BY_NAME = {row.name: row for row in (*LAUNCHERS, SRUN, MPIRUN, PYTHON_ROW)}
