// D-Bus values: building the parameters of Secret Service calls and reading their replies, as owned `Variant`s.
// Every child read out of a reply is an owner of its own, so nothing read here needs releasing by hand.

import CLibSecretLoader

extension Variant {
  // MARK: Building

  /// A D-Bus string (`s`).
  static func string(_ value: String) -> Variant { Variant(sinking: glib.g_variant_new_string(value)) }

  /// A D-Bus object path (`o`). `path` must be one: the Secret Service's own replies, or constants.
  static func objectPath(_ path: String) -> Variant { Variant(sinking: glib.g_variant_new_object_path(path)) }

  /// A D-Bus boolean (`b`).
  static func boolean(_ value: Bool) -> Variant { Variant(sinking: glib.g_variant_new_boolean(value ? 1 : 0)) }

  /// `value` in a box of type `v`, as D-Bus properties travel.
  static func boxed(_ value: borrowing Variant) -> Variant { Variant(sinking: glib.g_variant_new_variant(value.raw)) }

  /// A dictionary entry (`{kv}`).
  static func entry(_ key: borrowing Variant, _ value: borrowing Variant) -> Variant {
    Variant(sinking: glib.g_variant_new_dict_entry(key.raw, value.raw))
  }

  /// A tuple of the given children, the form every D-Bus call's parameters take.
  static func tuple() -> Variant { Variant(sinking: glib.g_variant_new_tuple(nil, 0)) }

  /// A tuple of one child.
  static func tuple(_ first: borrowing Variant) -> Variant {
    var children: [OpaquePointer?] = [first.raw]
    return Variant(sinking: glib.g_variant_new_tuple(&children, 1))
  }

  /// A tuple of two children.
  static func tuple(_ first: borrowing Variant, _ second: borrowing Variant) -> Variant {
    var children: [OpaquePointer?] = [first.raw, second.raw]
    return Variant(sinking: glib.g_variant_new_tuple(&children, 2))
  }

  /// A tuple of three children.
  static func tuple(
    _ first: borrowing Variant, _ second: borrowing Variant, _ third: borrowing Variant
  ) -> Variant {
    var children: [OpaquePointer?] = [first.raw, second.raw, third.raw]
    return Variant(sinking: glib.g_variant_new_tuple(&children, 3))
  }

  /// An array whose elements have the type `elementType` (a GVariant type string), as `fill` appends them.
  static func array(of elementType: String, _ fill: (borrowing ArrayBuilder) -> Void) -> Variant {
    let builder = ArrayBuilder(type: "a" + elementType)
    fill(builder)
    return builder.end()
  }

  /// An array of object paths (`ao`).
  static func objectPaths(_ paths: [String]) -> Variant {
    array(of: "o") { for path in paths { $0.append(.objectPath(path)) } }
  }

  /// A dictionary of strings (`a{ss}`), the form of a Secret Service item's attributes.
  static func stringDictionary(_ dictionary: [String: String]) -> Variant {
    array(of: "{ss}") { for (key, value) in dictionary { $0.append(.entry(.string(key), .string(value))) } }
  }

  // MARK: Reading

  /// Whether the value has the type `type` (a GVariant type string).
  func `is`(_ type: String) -> Bool {
    type.withCString { glib.g_variant_is_of_type(raw, OpaquePointer($0)) != 0 }
  }

  /// The number of children of a container.
  var count: Int { Int(glib.g_variant_n_children(raw)) }

  /// The child at `index` of a container.
  func child(_ index: Int) -> Variant { Variant(taking: glib.g_variant_get_child_value(raw, index)) }

  /// The text of a string or object path.
  var string: String { String(cString: glib.g_variant_get_string(raw, nil)) }

  /// The value of a boolean.
  var boolean: Bool { glib.g_variant_get_boolean(raw) != 0 }

  /// The value of an unsigned 64-bit integer (`t`).
  var unsigned: UInt64 { UInt64(glib.g_variant_get_uint64(raw)) }

  /// A `u`'s value.
  var unsigned32: UInt32 { glib.g_variant_get_uint32(raw) }

  /// The value inside a box of type `v`.
  var unboxed: Variant { Variant(taking: glib.g_variant_get_variant(raw)) }

  /// The texts of an array of strings or object paths.
  var strings: [String] { (0..<count).map { child($0).string } }

  /// The entries of a dictionary of strings (`a{ss}`).
  var stringDictionary: [String: String] {
    var dictionary: [String: String] = [:]
    for index in 0..<count {
      let entry = child(index)
      dictionary[entry.child(0).string] = entry.child(1).string
    }
    return dictionary
  }
}
