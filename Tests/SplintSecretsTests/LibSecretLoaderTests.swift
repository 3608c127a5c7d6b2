import CLibSecretLoader
import LibSecretABICheck
import Testing

@testable import SplintSecrets

/// libsecret, reached through dlopen (CLibSecretLoader) rather than linked.
@Suite struct LibSecretLoaderTests {
  @Test("the loader's declarations match libsecret's headers, and libsecret-1.so.0 has every function it names")
  func declarationsMatchAndEveryFunctionLoads() throws {
    #expect(splint_libsecret_abi_checked() == 1, "LibSecretABICheck compiled, so the declarations match")
    var reason: UnsafePointer<CChar>?
    let functions = splint_libsecret_load(&reason)
    #expect(functions != nil, "\(reason.map { String(cString: $0) } ?? "")")
    #expect(throws: Never.self) { try LibSecretLibrary.load() }
  }

  @Test func aLibsecretThatCannotBeLoadedMakesTheStoreUnavailableAndSaysWhatToInstall() {
    let error = LibSecretLibrary.unavailable("libsecret-1.so.0: cannot open shared object file")
    #expect(error.code == .storeUnavailable)
    #expect(error.description.contains("libsecret-1.so.0: cannot open shared object file"))
    #expect(error.description.contains("apt-get install libsecret-1-0"))
  }
}
