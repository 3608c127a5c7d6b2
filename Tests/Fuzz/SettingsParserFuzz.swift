// The libFuzzer target for the settings file parser. script/torture compiles it with SplintSettings' JSON sources
// (swiftc -sanitize=fuzzer,address) and runs it for a bounded time. Properties: no input crashes the parser or
// exhausts the stack; a document that parses renders to text that parses again to the same values.

/// libFuzzer's entry point: parses `size` bytes at `data` as a settings file and as a JSON value, and traps when a
/// property above does not hold. Returns 0, as libFuzzer asks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  if let document = try? SettingsDocument(parsing: bytes) {
    let again = try? SettingsDocument(parsing: document.rendered())
    if again?.values != document.values { fatalError("a parsed document rendered to text that parses differently") }
  }
  if let value = try? JSONValue(parsing: String(decoding: bytes, as: UTF8.self)) {
    if (try? JSONValue(parsing: value.description)) != value { fatalError("a value's text parses differently") }
  }
  return 0
}
