// The floor for propagation: a bare inotify watch on a directory, woken by a rename, reading the few bytes renamed
// in. Every inotify call of the benchmark is in this file.

import Foundation

#if canImport(Glibc)
  import Glibc
#endif

enum RawInotify {
  /// Child mode: watches `directory` for `name` being renamed in, reads the timestamp it holds, and prints how long
  /// after that timestamp it was read, until the timestamp is negative.
  static func watch(directory: String, name: String, ready: String) -> Never {
    let descriptor = inotify_init1(0)
    guard descriptor >= 0, inotify_add_watch(descriptor, directory, UInt32(IN_MOVED_TO)) >= 0 else {
      print("error inotify")
      exit(1)
    }
    _ = FileManager.default.createFile(atPath: ready, contents: nil)
    var latencies: [Int] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
    while true {
      let count = read(descriptor, buffer.baseAddress, buffer.count)
      guard count > 0 else { continue }
      var offset = 0
      while offset < count {
        let event = buffer.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
        let nameStart = offset + MemoryLayout<inotify_event>.size
        let eventName = String(
          decoding: UnsafeRawBufferPointer(rebasing: buffer[nameStart..<nameStart + Int(event.len)]).prefix { $0 != 0 },
          as: UTF8.self)
        offset = nameStart + Int(event.len)
        guard eventName == name,
          let text = try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8), let stamp = Int(text)
        else { continue }
        if stamp < 0 {
          print(latencies.map(String.init).joined(separator: "\n"))
          exit(0)
        }
        latencies.append(now() - stamp)
      }
    }
  }
}
