#include "CFileSystem.h"

#include <errno.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

long long splint_statfs_type(const char *path) {
  struct statfs status;
  int result;
  do {
    result = statfs(path, &status);
  } while (result != 0 && errno == EINTR);
  return result == 0 ? (long long)status.f_type : -(long long)errno;
}

unsigned int splint_device_major(uint64_t device) { return major(device); }

unsigned int splint_device_minor(uint64_t device) { return minor(device); }
