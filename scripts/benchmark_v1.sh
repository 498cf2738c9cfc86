#!/usr/bin/env bash
# The committed v1 leaderboard, rebuilt from scratch: every baseline run, the reference rows and the
# exploitability records, then the report. Two lanes run side by side, each one process on one core
# (every learner here trains with one thread), so the whole takes about an hour on 2 cores.
# Finished runs are skipped and killed ones resume: run it again after an interruption.
#   bash scripts/benchmark_v1.sh            # everything
#   LANES=1 bash scripts/benchmark_v1.sh    # one lane after the other (a 1-core machine)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/thirtyone}
ALGOS="ppo dmc nfsp sb3"
OTHERS="scat-4p-selfplay-v1 swedish-3p-vs-heuristic-v1 swedish-chips-2p-selfplay-v1 italian-4p-selfplay-v1
russian-2p-vs-heuristic-v1"
REFS="random greedy heuristic"  # and each task's shipped policy
EXPLOIT_MINUTES=${EXPLOIT_MINUTES:-1}
mkdir -p runs/benchmark
export NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1

lane_a() {  # the headline task, 3 seeds, then one seed of every other task
  $PY benchmark run --task scat-2p-vs-heuristic-v1 --algo $ALGOS --seed 1 2 3 --no-progress
  # shellcheck disable=SC2086
  $PY benchmark run --task $OTHERS --algo $ALGOS --seed 1 --no-progress
}

lane_b() {  # self-play, 3 seeds; reference rows; exploitability of the references and the seed-1 entries
  $PY benchmark run --task scat-2p-selfplay-v1 --algo $ALGOS --seed 1 2 3 --no-progress
  .venv/bin/python - <<'PY'
from pathlib import Path
from train.benchmark import RESULTS_DIR, evaluate, label
from thirtyone_env.tasks import TASKS
for task in (t for t in TASKS.values() if t.version == 1):
    for agent in ("random", "greedy", "heuristic", f"pretrained:{task.preset}_{task.num_players}p"):
        if not (RESULTS_DIR / task.name / f"reference-{label(agent)}.json").is_file():
            evaluate(task.name, agent, RESULTS_DIR, progress=False)
PY
  for target in $REFS pretrained:scat_2p $(for a in $ALGOS; do echo "policy:runs/benchmark/scat-2p-selfplay-v1/$a-s1/policy.safetensors"; done); do
    name=$(.venv/bin/python -c 'import sys; from train.benchmark import label; print(label(sys.argv[1]))' "$target")
    [ -f "benchmarks/results/exploit/scat-2p-selfplay-v1/$name.json" ] && continue
    $PY exploit --target "$target" --task scat-2p-selfplay-v1 --minutes "$EXPLOIT_MINUTES" --save --no-progress
  done
}

if [ "${LANES:-2}" = 1 ]; then
  lane_a; lane_b
else
  lane_a > runs/benchmark/lane_a.log 2>&1 &
  a=$!
  lane_b > runs/benchmark/lane_b.log 2>&1 &
  b=$!
  wait $a; wait $b
fi
$PY benchmark report
