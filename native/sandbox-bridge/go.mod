module vigil.invalid/sandbox-bridge

// The language version the bridge is written against; built with GOTOOLCHAIN=local (never a
// downloaded toolchain) by scripts/build-sandbox-bridge.sh. Go's standard library only.
go 1.21
