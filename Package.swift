// swift-tools-version: 6.1
import PackageDescription

let package = Package(
  name: "Splint",
  products: [
    .library(name: "SplintSecrets", targets: ["SplintSecrets"]),
    .library(name: "SplintSettings", targets: ["SplintSettings"]),
  ],
  targets: [
    .systemLibrary(
      name: "CLibSecret",
      pkgConfig: "libsecret-1",
      providers: [.apt(["libsecret-1-dev"])]
    ),
    .target(
      name: "SplintSecrets",
      dependencies: ["CLibSecret"]
    ),
    .target(name: "SplintSettings"),
    .executableTarget(
      name: "SecretsProbe",
      dependencies: ["SplintSecrets"],
      path: "Tests/SecretsProbe"
    ),
    .target(name: "TestSupport", path: "Tests/TestSupport"),
    .executableTarget(
      name: "SettingsProbe",
      dependencies: ["SplintSettings"],
      path: "Tests/SettingsProbe"
    ),
    .testTarget(
      name: "SplintSecretsTests",
      dependencies: ["SplintSecrets", "CLibSecret", "SecretsProbe", "TestSupport"]
    ),
    .testTarget(
      name: "SplintSettingsTests",
      dependencies: ["SplintSettings", "SettingsProbe", "TestSupport"]
    ),
  ],
  swiftLanguageModes: [.v6]
)
