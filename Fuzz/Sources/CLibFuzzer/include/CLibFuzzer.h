#ifndef BLUEJAY_CLIBFUZZER_H
#define BLUEJAY_CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, linked by `-sanitize=fuzzer`): parses the libFuzzer flags
/// in argv and runs `callback` on each input. A target calls it from its own `main`, which
/// SwiftPM gives every executable, instead of linking libFuzzer's `main`.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
