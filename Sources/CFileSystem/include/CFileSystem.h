#ifndef SPLINT_CFILESYSTEM_H
#define SPLINT_CFILESYSTEM_H

/// What Swift's Glibc module leaves out and SplintSystemCalls needs to tell which file system a path is on:
/// `statfs(2)`'s magic number (`<sys/vfs.h>`), and the major and minor numbers of a device (`<sys/sysmacros.h>`, whose
/// macros Swift cannot call), which /proc/self/mountinfo names mounts by.

#include <stdint.h>

/// The `f_type` that `statfs(path)` gives: the file system's magic number (linux/magic.h). Returns -errno when the
/// call failed.
long long splint_statfs_type(const char *path);

/// The major number of device `device` (a `stat` `st_dev`).
unsigned int splint_device_major(uint64_t device);

/// The minor number of device `device`.
unsigned int splint_device_minor(uint64_t device);

#endif
