// dlopen of libsecret-1.so.0 and dlsym of every function SplintSecrets calls: see CLibSecretLoader.h.

#include "CLibSecretLoader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static SplintLibSecret functions;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  // RTLD_LOCAL: nothing of GLib's becomes visible to the rest of the process; libsecret's own dependencies (GIO,
  // GObject, GLib) are searched by dlsym through its handle. A process that links libsecret already (the tests)
  // gets the copy it has.
  void *library = dlopen(SPLINT_LIBSECRET_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *reason = dlerror();
    snprintf(failure, sizeof failure, "%s", reason != NULL ? reason : SPLINT_LIBSECRET_SONAME " did not load");
    return;
  }
#define SPLINT_LOAD(name)                                                                                         \
  do {                                                                                                            \
    void *symbol = dlsym(library, #name);                                                                         \
    if (symbol == NULL) {                                                                                         \
      snprintf(failure, sizeof failure, "%s has no function %s", SPLINT_LIBSECRET_SONAME, #name);                \
      return;                                                                                                     \
    }                                                                                                             \
    *(void **)&functions.name = symbol;                                                                           \
  } while (0)
  SPLINT_LOAD(g_object_ref);
  SPLINT_LOAD(g_object_unref);
  SPLINT_LOAD(g_signal_connect_data);
  SPLINT_LOAD(g_signal_stop_emission_by_name);
  SPLINT_LOAD(g_free);
  SPLINT_LOAD(g_strdup);
  SPLINT_LOAD(g_hash_table_new_full);
  SPLINT_LOAD(g_hash_table_insert);
  SPLINT_LOAD(g_hash_table_lookup);
  SPLINT_LOAD(g_hash_table_unref);
  SPLINT_LOAD(g_str_hash);
  SPLINT_LOAD(g_str_equal);
  SPLINT_LOAD(g_list_free_full);
  SPLINT_LOAD(g_error_free);
  SPLINT_LOAD(g_quark_to_string);
  SPLINT_LOAD(g_main_context_new);
  SPLINT_LOAD(g_main_context_unref);
  SPLINT_LOAD(g_main_context_iteration);
  SPLINT_LOAD(g_main_context_wakeup);
  SPLINT_LOAD(g_main_context_push_thread_default);
  SPLINT_LOAD(g_main_context_pop_thread_default);
  SPLINT_LOAD(g_variant_new_string);
  SPLINT_LOAD(g_variant_new_object_path);
  SPLINT_LOAD(g_variant_new_boolean);
  SPLINT_LOAD(g_variant_new_variant);
  SPLINT_LOAD(g_variant_new_dict_entry);
  SPLINT_LOAD(g_variant_new_tuple);
  SPLINT_LOAD(g_variant_ref);
  SPLINT_LOAD(g_variant_ref_sink);
  SPLINT_LOAD(g_variant_unref);
  SPLINT_LOAD(g_variant_is_of_type);
  SPLINT_LOAD(g_variant_n_children);
  SPLINT_LOAD(g_variant_get_child_value);
  SPLINT_LOAD(g_variant_get_string);
  SPLINT_LOAD(g_variant_get_boolean);
  SPLINT_LOAD(g_variant_get_uint64);
  SPLINT_LOAD(g_variant_get_uint32);
  SPLINT_LOAD(g_variant_get_variant);
  SPLINT_LOAD(g_variant_builder_new);
  SPLINT_LOAD(g_variant_builder_add_value);
  SPLINT_LOAD(g_variant_builder_end);
  SPLINT_LOAD(g_variant_builder_unref);
  SPLINT_LOAD(g_cancellable_new);
  SPLINT_LOAD(g_cancellable_cancel);
  SPLINT_LOAD(g_bus_get_sync);
  SPLINT_LOAD(g_dbus_connection_set_exit_on_close);
  SPLINT_LOAD(g_dbus_connection_call_sync);
  SPLINT_LOAD(g_dbus_connection_call);
  SPLINT_LOAD(g_dbus_connection_signal_subscribe);
  SPLINT_LOAD(g_dbus_connection_signal_unsubscribe);
  SPLINT_LOAD(g_dbus_proxy_get_name_owner);
  SPLINT_LOAD(g_dbus_proxy_get_connection);
  SPLINT_LOAD(g_dbus_error_strip_remote_error);
  SPLINT_LOAD(secret_error_get_quark);
  SPLINT_LOAD(secret_service_get_type);
  SPLINT_LOAD(secret_service_open);
  SPLINT_LOAD(secret_service_open_finish);
  SPLINT_LOAD(secret_service_get_session_dbus_path);
  SPLINT_LOAD(secret_service_get_session_algorithms);
  SPLINT_LOAD(secret_service_encode_dbus_secret);
  SPLINT_LOAD(secret_service_decode_dbus_secret);
  SPLINT_LOAD(secret_value_new);
  SPLINT_LOAD(secret_value_get);
  SPLINT_LOAD(secret_value_unref);
  SPLINT_LOAD(secret_password_storev_binary_sync);
  SPLINT_LOAD(secret_password_lookupv_binary_sync);
  SPLINT_LOAD(secret_password_clearv_sync);
  SPLINT_LOAD(secret_password_searchv_sync);
  SPLINT_LOAD(secret_retrievable_get_attributes);
#undef SPLINT_LOAD
}

const SplintLibSecret *splint_libsecret_load(const char **error) {
  pthread_once(&once, load);
  if (failure[0] != '\0') {
    *error = failure;
    return NULL;
  }
  return &functions;
}

static const SplintSecretSchema generic_schema = {
  .name = "org.freedesktop.Secret.Generic",
  .flags = 1 << 1,  // SECRET_SCHEMA_DONT_MATCH_NAME
  .attributes = {{"service", 0}, {"username", 0}, {NULL, 0}},  // SECRET_SCHEMA_ATTRIBUTE_STRING
};

const SplintSecretSchema *splint_secret_generic_schema(void) { return &generic_schema; }
