#ifndef SPLINT_CLIBSECRETLOADER_H
#define SPLINT_CLIBSECRETLOADER_H

/// The part of libsecret's, GIO's and GLib's C API that SplintSecrets uses, reached through `dlopen` of
/// libsecret-1.so.0 the first time a Secret Service operation runs, rather than linked.
///
/// A program that links SplintSecrets (splintctl, a daemon that reads a setting) then starts without loading
/// libsecret, GIO, GObject, GLib and theirs (gcrypt, libmount, libselinux, ...), their relocations and their
/// constructors: about 1.7 ms of CPU at every start, measured. And where libsecret is not installed, everything but
/// the Secret Service store still works, and that store says what to install.
///
/// Only stable ABI is declared here: GLib's and libsecret's since 2.26 and 0.7. Every declaration is checked against
/// the real headers at compile time by the test target `LibSecretABICheck` (types of every function, values of every
/// constant, the layout of GError). Names are prefixed, so that a program may import this module beside the real
/// headers (the tests do); the functions keep their C names, as members of `SplintLibSecret`.

#include <stddef.h>
#include <stdint.h>

#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnullability-completeness"

#ifndef SPLINT_LIBSECRET_CHECK
// Opaque: SplintSecrets never looks inside these.
typedef struct SplintGObject SplintGObject;
typedef struct SplintGCancellable SplintGCancellable;
typedef struct SplintGAsyncResult SplintGAsyncResult;
typedef struct SplintGMainContext SplintGMainContext;
typedef struct SplintGVariant SplintGVariant;
typedef struct SplintGVariantType SplintGVariantType;
typedef struct SplintGVariantBuilder SplintGVariantBuilder;
typedef struct SplintGDBusConnection SplintGDBusConnection;
typedef struct SplintGDBusProxy SplintGDBusProxy;
typedef struct SplintGClosure SplintGClosure;
typedef struct SplintSecretService SplintSecretService;
typedef struct SplintSecretValue SplintSecretValue;
typedef struct SplintGHashTable SplintGHashTable;
typedef struct SplintSecretRetrievable SplintSecretRetrievable;
typedef struct SplintGErrorFields SplintGError;
typedef struct SplintGListFields SplintGList;
typedef struct SplintSecretSchemaFields SplintSecretSchema;
#endif

/// GLib's GError, whose three fields SplintSecrets reads.
struct SplintGErrorFields {
  uint32_t domain;
  int code;
  char *message;
};

/// GLib's GList, whose links SplintSecrets walks.
struct SplintGListFields {
  void *data;
  SplintGList *next;
  SplintGList *prev;
};

/// libsecret's SecretSchemaAttribute and SecretSchema: the schema the password functions take.
struct SplintSecretSchemaAttribute {
  const char *name;
  int type;
};
struct SplintSecretSchemaFields {
  const char *name;
  int flags;
  struct SplintSecretSchemaAttribute attributes[32];
  int reserved;
  void *reserved1;
  void *reserved2;
  void *reserved3;
  void *reserved4;
  void *reserved5;
  void *reserved6;
  void *reserved7;
};

/// GHashFunc and GEqualFunc.
typedef unsigned int (*SplintGHashFunc)(const void *key);
typedef int (*SplintGEqualFunc)(const void *a, const void *b);

/// GAsyncReadyCallback.
typedef void (*SplintGAsyncReadyCallback)(SplintGObject *source, SplintGAsyncResult *result, void *data);
/// GDBusSignalCallback.
typedef void (*SplintGDBusSignalCallback)(
  SplintGDBusConnection *connection, const char *sender, const char *path, const char *interface,
  const char *signal, SplintGVariant *parameters, void *data);
/// GCallback, GClosureNotify and GDestroyNotify.
typedef void (*SplintGCallback)(void);
typedef void (*SplintGClosureNotify)(void *data, SplintGClosure *closure);
typedef void (*SplintGDestroyNotify)(void *data);

// The constants SplintSecrets passes or compares with (GBusType, GDBusCallFlags, GDBusSignalFlags,
// SecretServiceFlags, GDBusError, GIOErrorEnum, SecretError).
#define SPLINT_G_BUS_TYPE_SESSION 2
#define SPLINT_G_DBUS_CALL_FLAGS_NO_AUTO_START 1u
#define SPLINT_G_DBUS_SIGNAL_FLAGS_NONE 0u
#define SPLINT_SECRET_SERVICE_OPEN_SESSION 2u
#define SPLINT_G_DBUS_ERROR_SERVICE_UNKNOWN 2
#define SPLINT_G_DBUS_ERROR_NAME_HAS_NO_OWNER 3
#define SPLINT_G_DBUS_ERROR_NO_REPLY 4
#define SPLINT_G_DBUS_ERROR_TIMEOUT 12
#define SPLINT_G_DBUS_ERROR_TIMED_OUT 20
#define SPLINT_G_DBUS_ERROR_SPAWN_EXEC_FAILED 23
#define SPLINT_G_DBUS_ERROR_SPAWN_NO_MEMORY 34
#define SPLINT_G_IO_ERROR_CLOSED 18
#define SPLINT_G_IO_ERROR_CANCELLED 19
#define SPLINT_G_IO_ERROR_TIMED_OUT 24
#define SPLINT_SECRET_ERROR_PROTOCOL 1
#define SPLINT_SECRET_ERROR_IS_LOCKED 2
#define SPLINT_G_DBUS_CALL_FLAGS_NONE 0u
#define SPLINT_G_IO_ERROR_FAILED 0
#define SPLINT_SECRET_SEARCH_ALL 2u
#define SPLINT_SECRET_ERROR_INVALID_FILE_FORMAT 5

/// The functions, each under its C name. A result marked _Nonnull is one GLib documents as never NULL. Integer types are GLib's as the C ABI has them on Linux: gboolean and gint
/// are int, guint and the flags are unsigned int, gsize and GType are size_t, gssize is ptrdiff_t, GQuark uint32_t,
/// gulong unsigned long, guint64 uint64_t, gpointer void *.
typedef struct SplintLibSecret {
  // GObject
  void *(*_Nonnull g_object_ref)(void *object);
  void (*_Nonnull g_object_unref)(void *object);
  unsigned long (*_Nonnull g_signal_connect_data)(
    void *instance, const char *detailed_signal, SplintGCallback handler, void *data,
    SplintGClosureNotify destroy_data, unsigned int connect_flags);
  void (*_Nonnull g_signal_stop_emission_by_name)(void *instance, const char *detailed_signal);

  // GLib
  void (*_Nonnull g_free)(void *memory);
  char *_Nonnull (*_Nonnull g_strdup)(const char *text);
  SplintGHashTable *_Nonnull (*_Nonnull g_hash_table_new_full)(
    SplintGHashFunc hash, SplintGEqualFunc equal, SplintGDestroyNotify free_key, SplintGDestroyNotify free_value);
  int (*_Nonnull g_hash_table_insert)(SplintGHashTable *table, void *key, void *value);
  void *(*_Nonnull g_hash_table_lookup)(SplintGHashTable *table, const void *key);
  void (*_Nonnull g_hash_table_unref)(SplintGHashTable *table);
  unsigned int (*_Nonnull g_str_hash)(const void *text);
  int (*_Nonnull g_str_equal)(const void *a, const void *b);
  void (*_Nonnull g_list_free_full)(SplintGList *list, SplintGDestroyNotify free_data);
  void (*_Nonnull g_error_free)(SplintGError *error);
  const char *(*_Nonnull g_quark_to_string)(uint32_t quark);
  SplintGMainContext *_Nonnull (*_Nonnull g_main_context_new)(void);
  void (*_Nonnull g_main_context_unref)(SplintGMainContext *context);
  int (*_Nonnull g_main_context_iteration)(SplintGMainContext *context, int may_block);
  void (*_Nonnull g_main_context_wakeup)(SplintGMainContext *context);
  void (*_Nonnull g_main_context_push_thread_default)(SplintGMainContext *context);
  void (*_Nonnull g_main_context_pop_thread_default)(SplintGMainContext *context);

  // GVariant
  SplintGVariant *_Nonnull (*_Nonnull g_variant_new_string)(const char *string);
  SplintGVariant *_Nonnull (*_Nonnull g_variant_new_object_path)(const char *object_path);
  SplintGVariant *_Nonnull (*_Nonnull g_variant_new_boolean)(int value);
  SplintGVariant *_Nonnull (*_Nonnull g_variant_new_variant)(SplintGVariant *value);
  SplintGVariant *_Nonnull (*_Nonnull g_variant_new_dict_entry)(SplintGVariant *key, SplintGVariant *value);
  SplintGVariant *_Nonnull (*_Nonnull g_variant_new_tuple)(SplintGVariant *const *children, size_t n_children);
  SplintGVariant *_Nonnull (*_Nonnull g_variant_ref)(SplintGVariant *value);
  SplintGVariant *_Nonnull (*_Nonnull g_variant_ref_sink)(SplintGVariant *value);
  void (*_Nonnull g_variant_unref)(SplintGVariant *value);
  int (*_Nonnull g_variant_is_of_type)(SplintGVariant *value, const SplintGVariantType *type);
  size_t (*_Nonnull g_variant_n_children)(SplintGVariant *value);
  SplintGVariant *_Nonnull (*_Nonnull g_variant_get_child_value)(SplintGVariant *value, size_t index);
  const char *_Nonnull (*_Nonnull g_variant_get_string)(SplintGVariant *value, size_t *length);
  int (*_Nonnull g_variant_get_boolean)(SplintGVariant *value);
  uint64_t (*_Nonnull g_variant_get_uint64)(SplintGVariant *value);
  uint32_t (*_Nonnull g_variant_get_uint32)(SplintGVariant *value);
  SplintGVariant *_Nonnull (*_Nonnull g_variant_get_variant)(SplintGVariant *value);
  SplintGVariantBuilder *_Nonnull (*_Nonnull g_variant_builder_new)(const SplintGVariantType *type);
  void (*_Nonnull g_variant_builder_add_value)(SplintGVariantBuilder *builder, SplintGVariant *value);
  SplintGVariant *_Nonnull (*_Nonnull g_variant_builder_end)(SplintGVariantBuilder *builder);
  void (*_Nonnull g_variant_builder_unref)(SplintGVariantBuilder *builder);

  // GIO
  SplintGCancellable *_Nonnull (*_Nonnull g_cancellable_new)(void);
  void (*_Nonnull g_cancellable_cancel)(SplintGCancellable *cancellable);
  SplintGDBusConnection *(*_Nonnull g_bus_get_sync)(
    int bus_type, SplintGCancellable *cancellable, SplintGError **error);
  void (*_Nonnull g_dbus_connection_set_exit_on_close)(SplintGDBusConnection *connection, int exit_on_close);
  SplintGVariant *(*_Nonnull g_dbus_connection_call_sync)(
    SplintGDBusConnection *connection, const char *bus_name, const char *object_path, const char *interface_name,
    const char *method_name, SplintGVariant *parameters, const SplintGVariantType *reply_type, unsigned int flags,
    int timeout_msec, SplintGCancellable *cancellable, SplintGError **error);
  void (*_Nonnull g_dbus_connection_call)(
    SplintGDBusConnection *connection, const char *bus_name, const char *object_path, const char *interface_name,
    const char *method_name, SplintGVariant *parameters, const SplintGVariantType *reply_type, unsigned int flags,
    int timeout_msec, SplintGCancellable *cancellable, SplintGAsyncReadyCallback callback, void *user_data);
  unsigned int (*_Nonnull g_dbus_connection_signal_subscribe)(
    SplintGDBusConnection *connection, const char *sender, const char *interface_name, const char *member,
    const char *object_path, const char *arg0, unsigned int flags, SplintGDBusSignalCallback callback,
    void *user_data, SplintGDestroyNotify user_data_free_func);
  void (*_Nonnull g_dbus_connection_signal_unsubscribe)(SplintGDBusConnection *connection, unsigned int id);
  char *(*_Nonnull g_dbus_proxy_get_name_owner)(SplintGDBusProxy *proxy);
  SplintGDBusConnection *_Nonnull (*_Nonnull g_dbus_proxy_get_connection)(SplintGDBusProxy *proxy);
  int (*_Nonnull g_dbus_error_strip_remote_error)(SplintGError *error);

  // libsecret
  uint32_t (*_Nonnull secret_error_get_quark)(void);
  size_t (*_Nonnull secret_service_get_type)(void);
  void (*_Nonnull secret_service_open)(
    size_t service_gtype, const char *service_bus_name, unsigned int flags, SplintGCancellable *cancellable,
    SplintGAsyncReadyCallback callback, void *user_data);
  SplintSecretService *(*_Nonnull secret_service_open_finish)(SplintGAsyncResult *result, SplintGError **error);
  const char *(*_Nonnull secret_service_get_session_dbus_path)(SplintSecretService *service);
  const char *(*_Nonnull secret_service_get_session_algorithms)(SplintSecretService *service);
  SplintGVariant *(*_Nonnull secret_service_encode_dbus_secret)(
    SplintSecretService *service, SplintSecretValue *value);
  SplintSecretValue *(*_Nonnull secret_service_decode_dbus_secret)(
    SplintSecretService *service, SplintGVariant *value);
  SplintSecretValue *_Nonnull (*_Nonnull secret_value_new)(const char *secret, ptrdiff_t length, const char *content_type);
  const char *(*_Nonnull secret_value_get)(SplintSecretValue *value, size_t *length);
  void (*_Nonnull secret_value_unref)(void *value);

  // libsecret's password functions (since 0.19), which pick the backend: inside a Flatpak sandbox with the Secret
  // portal, a file in the app's data directory, encrypted with a master secret the portal hands over.
  int (*_Nonnull secret_password_storev_binary_sync)(
    const SplintSecretSchema *schema, SplintGHashTable *attributes, const char *collection, const char *label,
    SplintSecretValue *value, SplintGCancellable *cancellable, SplintGError **error);
  SplintSecretValue *(*_Nonnull secret_password_lookupv_binary_sync)(
    const SplintSecretSchema *schema, SplintGHashTable *attributes, SplintGCancellable *cancellable,
    SplintGError **error);
  int (*_Nonnull secret_password_clearv_sync)(
    const SplintSecretSchema *schema, SplintGHashTable *attributes, SplintGCancellable *cancellable,
    SplintGError **error);
  SplintGList *(*_Nonnull secret_password_searchv_sync)(
    const SplintSecretSchema *schema, SplintGHashTable *attributes, unsigned int flags,
    SplintGCancellable *cancellable, SplintGError **error);
  SplintGHashTable *_Nonnull (*_Nonnull secret_retrievable_get_attributes)(SplintSecretRetrievable *retrievable);
} SplintLibSecret;

/// The name dlopen is given: libsecret's ABI, version 0 (every libsecret since 0.7).
#define SPLINT_LIBSECRET_SONAME "libsecret-1.so.0"

/// Loads libsecret-1.so.0 (with GIO, GObject and GLib, which it links) and looks up every function, once, whichever
/// thread asks first. Returns the functions, or NULL with `*error` set to why (dlerror's words), the same answer to
/// every later call.
const SplintLibSecret *_Nullable splint_libsecret_load(const char *_Nullable *_Nonnull error);

/// The schema of the items SplintSecrets stores through libsecret's password functions: named
/// `org.freedesktop.Secret.Generic` (as Python keyring and keytar name theirs, and as the Secret Service store
/// writes `xdg:schema`), with the string attributes `service` and `username`, matched without the name
/// (SECRET_SCHEMA_DONT_MATCH_NAME), so that items other programs stored under those attributes are found too.
const SplintSecretSchema *_Nonnull splint_secret_generic_schema(void);

#pragma clang diagnostic pop

#endif
