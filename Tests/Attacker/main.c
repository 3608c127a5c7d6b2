// A test helper: an unprivileged user attacking the settings files of a more privileged process, the way the
// security review did. Run as that user (setpriv), in a private mount namespace, by PrivilegeBoundaryTests and
// script/torture; never against the machine's own files.
//
//   attacker exchange A B     swap the names A and B with renameat2(RENAME_EXCHANGE) in a tight loop, until killed;
//                             prints "swapping" once the first swap is done, and "swapped N" when stopped with
//                             SIGTERM
//   attacker hold-lock PATH   open PATH (creating it), take flock(LOCK_EX) on it, print "holding", then sleep until
//                             killed
//
// Exit status 2 on a usage error, 1 when a system call fails before the attack starts.

#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static volatile sig_atomic_t stopped = 0;

static void stop(int signal) {
  (void)signal;
  stopped = 1;
}

static int exchange(const char *a, const char *b) {
  struct sigaction action = {.sa_handler = stop};
  sigaction(SIGTERM, &action, NULL);
  if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0) {
    perror("renameat2");
    return 1;
  }
  printf("swapping\n");
  fflush(stdout);
  unsigned long swaps = 1;
  while (!stopped) {
    if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0) swaps++;
  }
  printf("swapped %lu\n", swaps);
  return 0;
}

static int hold_lock(const char *path) {
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || flock(fd, LOCK_EX) != 0) {
    perror(path);
    return 1;
  }
  printf("holding\n");
  fflush(stdout);
  for (;;) pause();
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "exchange") == 0) return exchange(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "hold-lock") == 0) return hold_lock(argv[2]);
  fprintf(stderr, "usage: see the comment at the top of Tests/Attacker/main.c\n");
  return 2;
}
