#ifndef SPLINT_CKEYRING_H
#define SPLINT_CKEYRING_H

/// The Linux key retention service's two system calls, `add_key(2)` and `keyctl(2)`, one typed function per
/// operation SplintSecrets uses. Swift cannot call the variadic `syscall(2)`, and these need no library: glibc has
/// no wrappers for them (libkeyutils does, but would be one more package for users to install).
///
/// Each returns the call's non-negative result, or `-errno` when it failed (`errno` itself is left as the call set
/// it). Key IDs are `int32_t`, as the kernel's `key_serial_t` is.

#include <linux/keyctl.h>
#include <stddef.h>
#include <stdint.h>

/// `add_key(type, description, payload, length, keyring)`: creates the key, or updates the payload of the key of the
/// same type and description already linked in `keyring`. Returns the key's ID.
long splint_add_key(const char *type, const char *description, const void *payload, size_t length, int32_t keyring);

/// `KEYCTL_GET_KEYRING_ID`: the ID of a special keyring (`KEY_SPEC_*`), created first when `create` is nonzero.
long splint_keyctl_get_keyring_id(int32_t keyring, int create);

/// `KEYCTL_GET_PERSISTENT` for the caller's own user: the persistent keyring's ID, once it is linked into `keyring`.
long splint_keyctl_get_persistent(int32_t keyring);

/// `KEYCTL_LINK`: links `key` into `keyring`.
long splint_keyctl_link(int32_t key, int32_t keyring);

/// `KEYCTL_UNLINK`: removes the link from `keyring` to `key`.
long splint_keyctl_unlink(int32_t key, int32_t keyring);

/// `KEYCTL_SETPERM`: sets the permission mask of `key`.
long splint_keyctl_setperm(int32_t key, uint32_t permissions);

/// `KEYCTL_DESCRIBE`: writes `type;uid;gid;perm;description` and a NUL to `buffer` when it fits in `length`. Returns
/// the length it needs, NUL included.
long splint_keyctl_describe(int32_t key, char *buffer, size_t length);

/// `KEYCTL_READ`: copies the payload of `key` (for a keyring: its keys' IDs) to `buffer` when it fits in `length`.
/// Returns the payload's whole length.
long splint_keyctl_read(int32_t key, void *buffer, size_t length);

#endif
