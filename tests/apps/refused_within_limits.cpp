// refused_within_limits MAX_SECONDS MAX_RSS_MB PATTERN COMMAND...: runs COMMAND and passes when
// it exits non-zero without a signal, within MAX_SECONDS of wall time and MAX_RSS_MB of peak
// resident memory (the child's own, from wait4's rusage), with PATTERN (an extended regular
// expression) in its output. For readers that must refuse hostile input before allocating for
// it (imerge-train --resume of a 6 GiB file or /dev/zero).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s MAX_SECONDS MAX_RSS_MB PATTERN COMMAND...\n", argv[0]);
    return 2;
  }
  const double maxSeconds = std::atof(argv[1]);
  const long maxRssMb = std::atol(argv[2]);
  const std::regex pattern(argv[3], std::regex::extended);
  int output[2];
  if (pipe(output) != 0) return 2;
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    dup2(output[1], STDOUT_FILENO);
    dup2(output[1], STDERR_FILENO);
    close(output[0]);
    close(output[1]);
    execvp(argv[4], argv + 4);
    std::perror(argv[4]);
    _exit(127);
  }
  close(output[1]);
  std::string text;
  char chunk[4096];
  for (ssize_t got; (got = read(output[0], chunk, sizeof chunk)) > 0;) text.append(chunk, got);
  int status = 0;
  struct rusage usage {};
  wait4(child, &status, 0, &usage);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long rssMb = usage.ru_maxrss / 1024;  // kilobytes on Linux
  std::fputs(text.c_str(), stdout);
  std::printf("refused_within_limits: %.3f s, peak RSS %ld MB, %s %d\n", seconds, rssMb,
              WIFSIGNALED(status) ? "signal" : "exit status",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  bool ok = true;
  if (WIFSIGNALED(status)) {
    std::printf("refused_within_limits: killed by signal %d; expected a clean refusal\n",
                WTERMSIG(status));
    ok = false;
  } else if (WEXITSTATUS(status) == 0) {
    std::printf("refused_within_limits: the command succeeded; expected a refusal\n");
    ok = false;
  }
  if (seconds > maxSeconds) {
    std::printf("refused_within_limits: %.3f s is over the %.3g s limit\n", seconds, maxSeconds);
    ok = false;
  }
  if (rssMb > maxRssMb) {
    std::printf("refused_within_limits: peak RSS %ld MB is over the %ld MB limit\n", rssMb,
                maxRssMb);
    ok = false;
  }
  if (!std::regex_search(text, pattern)) {
    std::printf("refused_within_limits: the output does not match '%s'\n", argv[3]);
    ok = false;
  }
  return ok ? 0 : 1;
}
