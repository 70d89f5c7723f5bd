#!/usr/bin/env bash
# stop_signal_resumes.sh IMERGE_TRAIN WORKDIR SIGNAL TARGET [FLAG...]: a run stopped by SIGNAL in
# the middle of its first epoch, then resumed with --resume, must end with the same checkpoint,
# byte for byte, as a run never stopped (apps/stop_signals.h). TARGET is who gets the signal:
#   train     the training process (under LAUNCHER, rank 1 alone: every rank must still stop
#             after the same step, and rank 0 saves)
#   launcher  mpirun itself (LAUNCHER must be set), which forwards SIGUSR1 to every rank
#   twice     the training process, twice: the second one stops it at once, without saving
# The stopped run must exit with 128 + the signal's number, say after which step it stopped
# (strictly inside an epoch) and print the command that continues it. FLAGs go to every run;
# with LAUNCHER set (e.g. "mpirun -np 2") every run goes through it. MODEL, IMAGE_SIZE and
# BATCH choose the model and batch (default resnet20 at 16x16, batch 8; small_cnn at 28 has
# dropout, whose draws differ per rank and must continue on each, and needs batch 64 for steps
# long enough to be stopped in its first epoch).
set -u
train=$1 work=$2 signal=$3 target=$4
shift 4
read -r -a launcher <<<"${LAUNCHER:-}"
rm -rf "$work" && mkdir -p "$work"
marker=$((RANDOM * 32768 + RANDOM))  # a seed no other run uses, to find this job's processes
trap 'pkill -9 -f -- "--seed $marker" 2>/dev/null' EXIT
steps=20
# Steps of tens of milliseconds, so the signal lands in the first of two epochs; "twice" takes
# longer steps, so that its second signal arrives while the first one's step still runs.
batch=${BATCH:-8}
[[ $target == twice ]] && batch=96
common=(--dataset synthetic --image-size "${IMAGE_SIZE:-16}" --model "${MODEL:-resnet20}"
        --batch-size "$batch"
        --max-steps "$steps" --epochs 2 --threads 1 --workers 1 --seed "$marker" --lr 0.05
        --log-every 1 "$@")
fail() {
  echo "stop_signal_resumes: $*" >&2
  for file in "$work"/*.txt; do
    echo "--- $file" >&2
    tr '\r' '\n' <"$file" | tail -n 12 >&2
  done
  exit 1
}

# The process that gets the signal: mpirun, rank 1 under mpirun, or the one process.
victim_of() {
  local job=$1
  if [[ $target == launcher ]] || ((${#launcher[@]} == 0)); then
    echo "$job"
    return
  fi
  for pid in $(pgrep -f -- "--seed $marker"); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
      echo "$pid"
      return
    fi
  done
}

"${launcher[@]}" "$train" "${common[@]}" --checkpoint-dir "$work/straight" >"$work/straight.txt" 2>&1 ||
  fail "the uninterrupted run failed"

"${launcher[@]}" "$train" "${common[@]}" --checkpoint-dir "$work/split" >"$work/stopped.txt" \
  2>"$work/stopped-stderr.txt" &
job=$!
# The progress bar redraws a few times a second, not every step, so wait for any step from 3 to
# 17 of the first epoch; a slow machine may still land the stop in the second epoch, which tests
# the same resume.
for _ in $(seq 1 1200); do
  grep -aEq "epoch 1/2 (\[[#.]*\] )?([3-9]|1[0-7])/$steps " "$work/stopped.txt" && break
  kill -0 "$job" 2>/dev/null || break
  sleep 0.02
done
victim=$(victim_of "$job")
[[ -n $victim ]] || fail "no process to send SIG$signal to (training finished or never started)"
kill "-$signal" "$victim"
if [[ $target == twice ]]; then
  for _ in $(seq 1 500); do
    grep -q "stopping after this training step" "$work/stopped-stderr.txt" && break
    sleep 0.01
  done
  kill "-$signal" "$victim"
fi
wait "$job"
status=$?
expected=$((128 + $(kill -l "$signal")))
((status == expected)) || fail "the stopped run exited with $status, not $expected (128 + SIG$signal)"

if [[ $target == twice ]]; then
  grep -q "SIG$signal again.*stopping at once" "$work/stopped-stderr.txt" ||
    fail "the second SIG$signal did not say it stops at once"
  [[ -z $(ls -A "$work/split") ]] || fail "a run stopped at once left files: $(ls "$work/split")"
  echo "stop_signal_resumes: the second SIG$signal stopped the run at once, nothing saved"
  exit 0
fi

stopped=$(grep -oE "stopped by SIG$signal after step [0-9]+/$steps of epoch [12]/2" \
  "$work/stopped-stderr.txt") || fail "the stopped run did not say where it stopped"
step=$(sed -E 's#.* step ([0-9]+)/.*#\1#' <<<"$stopped")
epoch=$(sed -E 's#.* epoch ([12])/2#\1#' <<<"$stopped")
((step > 0 && step < steps)) || fail "stopped after step $step: not inside the epoch"
grep -q -- "to continue: .*--resume $work/split/last.ckpt" "$work/stopped-stderr.txt" ||
  fail "the stopped run did not print the command that continues it"
echo "stop_signal_resumes: $stopped"

"${launcher[@]}" "$train" "${common[@]}" --checkpoint-dir "$work/split" \
  --resume "$work/split/last.ckpt" >"$work/resumed.txt" 2>&1 || fail "the resumed run failed"
grep -aq "in epoch $epoch after step $step/$steps" "$work/resumed.txt" ||
  fail "the resumed run did not continue after step $step of epoch $epoch"
cmp "$work/straight/last.ckpt" "$work/split/last.ckpt" ||
  fail "the resumed run differs from the uninterrupted one"
echo "stop_signal_resumes: resumed after step $step, identical checkpoints after 2 epochs"
