#ifndef SPLINT_CLIBSECRET_SHIM_H
#define SPLINT_CLIBSECRET_SHIM_H

#include <libsecret/secret.h>

/// The schema Python keyring and keytar write: name `org.freedesktop.Secret.Generic`, string attributes `service`
/// and `username`. `SECRET_SCHEMA_DONT_MATCH_NAME` makes lookups ignore the `xdg:schema` attribute, so items written
/// without a schema (secret-tool, go-keyring, Rust keyring) match too; stores still write the name.
/// A C constant because its name and attribute strings must outlive every call, which Swift cannot declare.
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
