#ifndef SPLINT_CLIBSECRET_SHIM_H
#define SPLINT_CLIBSECRET_SHIM_H

/// SplintSecrets speaks the Secret Service's D-Bus API itself and uses libsecret for the session: its key exchange
/// and the encoding of secrets (`secret_service_encode_dbus_secret`, `secret_service_decode_dbus_secret`,
/// `secret_service_get_session_dbus_path`). libsecret ships those in `secret-paths.h`, which it marks unstable;
/// they are unchanged from 0.7 to 0.21.
#define SECRET_API_SUBJECT_TO_CHANGE
#include <libsecret/secret.h>

/// The schema Python keyring and keytar write: name `org.freedesktop.Secret.Generic`, string attributes `service`
/// and `username`. `SECRET_SCHEMA_DONT_MATCH_NAME` makes lookups ignore the `xdg:schema` attribute, so items written
/// without a schema (secret-tool, go-keyring, Rust keyring) match too; stores still write the name.
/// A C constant because its name and attribute strings must outlive every call, which Swift cannot declare.
/// SplintSecrets itself builds the same attributes; the benchmark's and the fault suite's C floors use this.
static inline const SecretSchema *splint_generic_schema(void) {
  static const SecretSchema schema = {
    .name = "org.freedesktop.Secret.Generic",
    .flags = SECRET_SCHEMA_DONT_MATCH_NAME,
    .attributes = {
      { "service", SECRET_SCHEMA_ATTRIBUTE_STRING },
      { "username", SECRET_SCHEMA_ATTRIBUTE_STRING },
      { NULL, 0 },
    },
  };
  return &schema;
}

#endif
