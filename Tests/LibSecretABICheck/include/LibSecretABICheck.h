#ifndef SPLINT_LIBSECRETABICHECK_H
#define SPLINT_LIBSECRETABICHECK_H

/// 1: CLibSecretLoader.h's declarations matched libsecret's, GIO's and GLib's own headers when this was compiled
/// (check.c does not compile otherwise).
int splint_libsecret_abi_checked(void);

#endif
