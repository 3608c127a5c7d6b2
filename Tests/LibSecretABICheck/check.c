// CLibSecretLoader.h declares the part of libsecret's, GIO's and GLib's API that SplintSecrets calls, without their
// headers, so that SplintSecrets need not link them. This file holds those declarations against the real headers:
// it does not compile unless every function's type, every constant's value and GError's layout agree.

#define SECRET_API_SUBJECT_TO_CHANGE
#include <libsecret/secret.h>

// The loader's types, spelled as the real headers spell them.
#define SPLINT_LIBSECRET_CHECK 1
#define SplintGObject GObject
#define SplintGCancellable GCancellable
#define SplintGAsyncResult GAsyncResult
#define SplintGMainContext GMainContext
#define SplintGVariant GVariant
#define SplintGVariantType GVariantType
#define SplintGVariantBuilder GVariantBuilder
#define SplintGDBusConnection GDBusConnection
#define SplintGDBusProxy GDBusProxy
#define SplintGClosure GClosure
#define SplintSecretService SecretService
#define SplintSecretValue SecretValue
#define SplintGError GError
#define SplintGHashTable GHashTable
#define SplintSecretRetrievable SecretRetrievable
#define SplintGList GList
#define SplintSecretSchema SecretSchema
#include <CLibSecretLoader.h>

#include <stddef.h>

#define SAME_TYPE(name)                                                                                           \
  _Static_assert(                                                                                                 \
    __builtin_types_compatible_p(__typeof__(((SplintLibSecret *)0)->name), __typeof__(&name)),                   \
    #name " is not declared as in its header")

SAME_TYPE(g_object_ref);
SAME_TYPE(g_object_unref);
SAME_TYPE(g_signal_connect_data);
SAME_TYPE(g_signal_stop_emission_by_name);
SAME_TYPE(g_free);
SAME_TYPE(g_error_free);
SAME_TYPE(g_quark_to_string);
SAME_TYPE(g_main_context_new);
SAME_TYPE(g_main_context_unref);
SAME_TYPE(g_main_context_iteration);
SAME_TYPE(g_main_context_wakeup);
SAME_TYPE(g_main_context_push_thread_default);
SAME_TYPE(g_main_context_pop_thread_default);
SAME_TYPE(g_variant_new_string);
SAME_TYPE(g_variant_new_object_path);
SAME_TYPE(g_variant_new_boolean);
SAME_TYPE(g_variant_new_variant);
SAME_TYPE(g_variant_new_dict_entry);
SAME_TYPE(g_variant_new_tuple);
SAME_TYPE(g_variant_ref);
SAME_TYPE(g_variant_ref_sink);
SAME_TYPE(g_variant_unref);
SAME_TYPE(g_variant_is_of_type);
SAME_TYPE(g_variant_n_children);
SAME_TYPE(g_variant_get_child_value);
SAME_TYPE(g_variant_get_string);
SAME_TYPE(g_variant_get_boolean);
SAME_TYPE(g_variant_get_uint64);
SAME_TYPE(g_variant_get_variant);
SAME_TYPE(g_variant_builder_new);
SAME_TYPE(g_variant_builder_add_value);
SAME_TYPE(g_variant_builder_end);
SAME_TYPE(g_variant_builder_unref);
SAME_TYPE(g_cancellable_new);
SAME_TYPE(g_cancellable_cancel);
SAME_TYPE(g_bus_get_sync);
SAME_TYPE(g_dbus_connection_set_exit_on_close);
SAME_TYPE(g_dbus_connection_call_sync);
SAME_TYPE(g_dbus_connection_call);
SAME_TYPE(g_dbus_connection_signal_subscribe);
SAME_TYPE(g_dbus_connection_signal_unsubscribe);
SAME_TYPE(g_dbus_proxy_get_name_owner);
SAME_TYPE(g_dbus_proxy_get_connection);
SAME_TYPE(g_dbus_error_strip_remote_error);
SAME_TYPE(secret_error_get_quark);
SAME_TYPE(secret_service_get_type);
SAME_TYPE(secret_service_open);
SAME_TYPE(secret_service_open_finish);
SAME_TYPE(secret_service_get_session_dbus_path);
SAME_TYPE(secret_service_get_session_algorithms);
SAME_TYPE(secret_service_encode_dbus_secret);
SAME_TYPE(secret_service_decode_dbus_secret);
SAME_TYPE(secret_value_new);
SAME_TYPE(secret_value_get);
SAME_TYPE(secret_value_unref);
SAME_TYPE(g_strdup);
SAME_TYPE(g_hash_table_new_full);
SAME_TYPE(g_hash_table_insert);
SAME_TYPE(g_hash_table_lookup);
SAME_TYPE(g_hash_table_unref);
SAME_TYPE(g_str_hash);
SAME_TYPE(g_str_equal);
SAME_TYPE(g_list_free_full);
SAME_TYPE(g_variant_get_uint32);
SAME_TYPE(secret_password_storev_binary_sync);
SAME_TYPE(secret_password_lookupv_binary_sync);
SAME_TYPE(secret_password_clearv_sync);
SAME_TYPE(secret_password_searchv_sync);
SAME_TYPE(secret_retrievable_get_attributes);
_Static_assert(__builtin_types_compatible_p(SplintGHashFunc, GHashFunc), "GHashFunc");
_Static_assert(__builtin_types_compatible_p(SplintGEqualFunc, GEqualFunc), "GEqualFunc");

// The callback types, through the functions that take them.
_Static_assert(__builtin_types_compatible_p(SplintGAsyncReadyCallback, GAsyncReadyCallback), "GAsyncReadyCallback");
_Static_assert(__builtin_types_compatible_p(SplintGDBusSignalCallback, GDBusSignalCallback), "GDBusSignalCallback");
_Static_assert(__builtin_types_compatible_p(SplintGCallback, GCallback), "GCallback");
_Static_assert(__builtin_types_compatible_p(SplintGClosureNotify, GClosureNotify), "GClosureNotify");
_Static_assert(__builtin_types_compatible_p(SplintGDestroyNotify, GDestroyNotify), "GDestroyNotify");

#define SAME_VALUE(name) _Static_assert(SPLINT_##name == name, #name " has another value in its header")

SAME_VALUE(G_BUS_TYPE_SESSION);
SAME_VALUE(G_DBUS_CALL_FLAGS_NO_AUTO_START);
SAME_VALUE(G_DBUS_SIGNAL_FLAGS_NONE);
SAME_VALUE(SECRET_SERVICE_OPEN_SESSION);
SAME_VALUE(G_DBUS_ERROR_SERVICE_UNKNOWN);
SAME_VALUE(G_DBUS_ERROR_NAME_HAS_NO_OWNER);
SAME_VALUE(G_DBUS_ERROR_NO_REPLY);
SAME_VALUE(G_DBUS_ERROR_TIMEOUT);
SAME_VALUE(G_DBUS_ERROR_TIMED_OUT);
SAME_VALUE(G_DBUS_ERROR_SPAWN_EXEC_FAILED);
SAME_VALUE(G_DBUS_ERROR_SPAWN_NO_MEMORY);
SAME_VALUE(G_IO_ERROR_CLOSED);
SAME_VALUE(G_IO_ERROR_CANCELLED);
SAME_VALUE(G_IO_ERROR_TIMED_OUT);
SAME_VALUE(SECRET_ERROR_PROTOCOL);
SAME_VALUE(SECRET_ERROR_IS_LOCKED);
SAME_VALUE(G_DBUS_CALL_FLAGS_NONE);
SAME_VALUE(G_IO_ERROR_FAILED);
SAME_VALUE(SECRET_SEARCH_ALL);
SAME_VALUE(SECRET_ERROR_INVALID_FILE_FORMAT);
_Static_assert((1 << 1) == SECRET_SCHEMA_DONT_MATCH_NAME, "SECRET_SCHEMA_DONT_MATCH_NAME");
_Static_assert(0 == SECRET_SCHEMA_ATTRIBUTE_STRING, "SECRET_SCHEMA_ATTRIBUTE_STRING");

// GError, whose fields SplintSecrets reads.
_Static_assert(sizeof(struct SplintGErrorFields) == sizeof(GError), "GError's size");
_Static_assert(offsetof(struct SplintGErrorFields, domain) == offsetof(GError, domain), "GError.domain");
_Static_assert(offsetof(struct SplintGErrorFields, code) == offsetof(GError, code), "GError.code");
_Static_assert(offsetof(struct SplintGErrorFields, message) == offsetof(GError, message), "GError.message");
_Static_assert(sizeof(((GError *)0)->domain) == sizeof(uint32_t), "GError.domain's size");

// GList, whose links SplintSecrets walks, and SecretSchema, which it passes.
#define SAME_FIELD(ours, theirs, field)                                                                           \
  _Static_assert(offsetof(ours, field) == offsetof(theirs, field) &&                                              \
                   sizeof(((ours *)0)->field) == sizeof(((theirs *)0)->field),                                    \
                 #theirs "." #field)
_Static_assert(sizeof(struct SplintGListFields) == sizeof(GList), "GList's size");
SAME_FIELD(struct SplintGListFields, GList, data);
SAME_FIELD(struct SplintGListFields, GList, next);
SAME_FIELD(struct SplintGListFields, GList, prev);
_Static_assert(sizeof(struct SplintSecretSchemaFields) == sizeof(SecretSchema), "SecretSchema's size");
SAME_FIELD(struct SplintSecretSchemaFields, SecretSchema, name);
SAME_FIELD(struct SplintSecretSchemaFields, SecretSchema, flags);
SAME_FIELD(struct SplintSecretSchemaFields, SecretSchema, attributes);
SAME_FIELD(struct SplintSecretSchemaFields, SecretSchema, reserved);
SAME_FIELD(struct SplintSecretSchemaFields, SecretSchema, reserved7);
SAME_FIELD(struct SplintSecretSchemaAttribute, SecretSchemaAttribute, name);
SAME_FIELD(struct SplintSecretSchemaAttribute, SecretSchemaAttribute, type);

int splint_libsecret_abi_checked(void) { return 1; }
