#!/usr/bin/env bash
# dist_rank_dies.sh MPIRUN IMERGE_TRAIN SIGNAL: two ranks train; once training is under way,
# rank 1 gets SIGNAL (KILL: killed; TERM: it exits, as --graceful-stop false has it; STOP: it
# stops but lives; stop_signal_resumes.sh has the graceful SIGTERM). The job must stop
# with a non-zero status within 60 seconds, never hang, and imerge-train itself must say what
# happened to rank 1: that it had gone, or, when stopped, that it never reached the collective
# rank 0 waited at, within --dist-timeout (10 s) + 5 s.
set -u
mpirun=$1 train=$2 signal=$3
log=$(mktemp)
marker=$((RANDOM * 32768 + RANDOM))  # a seed no other run uses, to find this job's ranks
# A stopped rank that mpirun failed to end must not outlive the test.
trap 'rm -f "$log"; pkill -9 -f -- "--seed $marker" 2>/dev/null' EXIT
timeout=10
"$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 2 \
  "$train" --dist wfbp --model resnet20 --dataset synthetic --image-size 16 --batch-size 16 \
  --epochs 1 --threads 1 --workers 1 --log-every 5 --seed "$marker" --dist-timeout "$timeout" \
  --graceful-stop false \
  >"$log" 2>&1 &
job=$!

# Wait for training steps (not just start-up) before the fault.
for _ in $(seq 1 600); do
  grep -Eq "\] [0-9]{2,}/" "$log" && break
  kill -0 "$job" 2>/dev/null || break
  sleep 0.1
done
victim=""
for pid in $(pgrep -f -- "--seed $marker"); do
  if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
    victim=$pid
  fi
done
show_log() { tr '\r' '\n' <"$log" | tail -n 15; }
if [[ -z $victim ]]; then
  show_log
  echo "dist_rank_dies: rank 1 was not found running" >&2
  kill "$job" 2>/dev/null
  exit 1
fi
echo "dist_rank_dies: sending SIG$signal to rank 1 (pid $victim)"
start=$SECONDS
kill -s "$signal" "$victim"

# The cause leads rank 0's error line (not a later task's "was not run").
stall="error on rank 0 of 2: all-reduce 'bucket .* did not complete within $timeout s on rank 0 of 2: rank 1 did not report reaching it"
named_after=""
status=""
while ((SECONDS - start < 60)); do
  if [[ -z $named_after ]] && grep -q "$stall" "$log"; then named_after=$((SECONDS - start)); fi
  if ! kill -0 "$job" 2>/dev/null; then
    wait "$job"
    status=$?
    break
  fi
  sleep 0.2
done
show_log
if [[ -z $status ]]; then
  echo "dist_rank_dies: the job still runs 60 s after rank 1 got SIG$signal" >&2
  kill -9 "$job" 2>/dev/null
  pkill -9 -f -- "--seed $marker"
  exit 1
fi
echo "dist_rank_dies: the job stopped after $((SECONDS - start)) s with status $status"
if ((status == 0)); then
  echo "dist_rank_dies: expected a non-zero status" >&2
  exit 1
fi
if [[ $signal == STOP ]]; then
  # The stall check (distributed/comm/stall_report.h): rank 0 names rank 1 as the one it never
  # heard from at the collective, and itself as waiting, first and within the time-out + 5 s;
  # rank 1, continued by mpirun to be ended, says it was not running.
  if [[ -z $named_after ]]; then
    echo "dist_rank_dies: rank 0 did not say that rank 1 never reported reaching the collective" >&2
    exit 1
  fi
  echo "dist_rank_dies: rank 0 named rank 1 as stalled $named_after s after SIGSTOP"
  if ((named_after > timeout + 5)); then
    echo "dist_rank_dies: that is later than --dist-timeout $timeout s + 5 s" >&2
    exit 1
  fi
  if ! grep -q "rank 0 was waiting at it (#" "$log"; then
    echo "dist_rank_dies: rank 0 did not say where it was waiting" >&2
    exit 1
  fi
  if grep -q "MPI could not complete it" "$log"; then
    echo "dist_rank_dies: a rank blamed MPI for a stall that a stopped rank caused" >&2
    exit 1
  fi
  exit 0
fi
# imerge-train's own account (apps/rank_exit_report.h), not mpirun's "process rank 1 ... exited":
# rank 0, stopped by mpirun, names rank 1 as gone; with TERM rank 1 also says what stopped it.
if ! grep -Eq "imerge-train: rank 1 of 2 \(pid [0-9]+ on [^)]+\) had already exited" "$log"; then
  echo "dist_rank_dies: imerge-train's output does not say that rank 1 had exited" >&2
  exit 1
fi
if [[ $signal == TERM ]] && ! grep -Eq "imerge-train: rank 1 of 2 \(.*\) stopped by SIGTERM" "$log"; then
  echo "dist_rank_dies: rank 1 did not say that SIGTERM stopped it" >&2
  exit 1
fi
