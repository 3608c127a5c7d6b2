// A test helper: an unprivileged user attacking the settings files of a more privileged process, the way the
// security review did. Run as that user (setpriv), in a private mount namespace, by PrivilegeBoundaryTests and
// script/torture; never against the machine's own files.
//
//   attacker exchange A B     swap the names A and B with renameat2(RENAME_EXCHANGE) in a tight loop, until killed;
//                             prints "swapping" once the first swap is done, and "swapped N" when stopped with
//                             SIGTERM
//   attacker hold-lock PATH   open PATH (creating it), take flock(LOCK_EX) on it, print "holding", then sleep until
//                             killed
//   attacker hold-shared DIR  open every file in DIR it may open (and DIR itself), each once, and hold flock(LOCK_SH) on
//                             each; print "holding N" after the first pass, then look again every 10 ms for files that
//                             appear, until killed
//
// Exit status 2 on a usage error, 1 when a system call fails before the attack starts.

#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
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

// Holds a shared lock on what `name` in `directory` is, unless an inode already held; returns whether it holds one.
static int hold_shared_one(int directory, const char *name, ino_t *held, int *count, int capacity) {
  int fd = openat(directory, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat status;
  if (fstat(fd, &status) != 0) {
    close(fd);
    return 0;
  }
  for (int i = 0; i < *count; i++) {
    if (held[i] == status.st_ino) {
      close(fd);
      return 0;
    }
  }
  if (*count >= capacity || flock(fd, LOCK_SH | LOCK_NB) != 0) {
    close(fd);
    return 0;
  }
  held[(*count)++] = status.st_ino;  // the descriptor stays open: the lock with it
  return 1;
}

static int hold_shared(const char *path) {
  enum { capacity = 4096 };
  static ino_t held[capacity];
  int count = 0;
  int directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory < 0) {
    perror(path);
    return 1;
  }
  hold_shared_one(directory, ".", held, &count, capacity);
  for (int pass = 0;; pass++) {
    DIR *listing = fdopendir(dup(directory));
    if (listing == NULL) return 1;
    rewinddir(listing);  // the descriptor's offset is shared with every earlier pass's
    struct dirent *entry;
    while ((entry = readdir(listing)) != NULL) {
      if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
        hold_shared_one(directory, entry->d_name, held, &count, capacity);
    }
    closedir(listing);
    if (pass == 0) {
      printf("holding %d\n", count);
      fflush(stdout);
    }
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "exchange") == 0) return exchange(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "hold-lock") == 0) return hold_lock(argv[2]);
  if (argc == 3 && strcmp(argv[1], "hold-shared") == 0) return hold_shared(argv[2]);
  fprintf(stderr, "usage: see the comment at the top of Tests/Attacker/main.c\n");
  return 2;
}
