#include "CKeyring.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

// Integer arguments go through syscall(2)'s variadic list as `long`, the width it reads them at.

static long result(long value) { return value < 0 ? -errno : value; }

long splint_add_key(const char *type, const char *description, const void *payload, size_t length, int32_t keyring) {
  return result(syscall(SYS_add_key, type, description, payload, length, (long)keyring));
}

long splint_keyctl_get_keyring_id(int32_t keyring, int create) {
  return result(syscall(SYS_keyctl, (long)KEYCTL_GET_KEYRING_ID, (long)keyring, (long)create));
}

long splint_keyctl_get_persistent(int32_t keyring) {
  return result(syscall(SYS_keyctl, (long)KEYCTL_GET_PERSISTENT, (long)-1, (long)keyring));
}

long splint_keyctl_link(int32_t key, int32_t keyring) {
  return result(syscall(SYS_keyctl, (long)KEYCTL_LINK, (long)key, (long)keyring));
}

long splint_keyctl_unlink(int32_t key, int32_t keyring) {
  return result(syscall(SYS_keyctl, (long)KEYCTL_UNLINK, (long)key, (long)keyring));
}

long splint_keyctl_setperm(int32_t key, uint32_t permissions) {
  return result(syscall(SYS_keyctl, (long)KEYCTL_SETPERM, (long)key, (unsigned long)permissions));
}

long splint_keyctl_describe(int32_t key, char *buffer, size_t length) {
  return result(syscall(SYS_keyctl, (long)KEYCTL_DESCRIBE, (long)key, buffer, length));
}

long splint_keyctl_read(int32_t key, void *buffer, size_t length) {
  return result(syscall(SYS_keyctl, (long)KEYCTL_READ, (long)key, buffer, length));
}
