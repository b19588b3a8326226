// RUN: %python %S/emit_hf_fixture_ops.py %S/../../../python/tests/fixtures/hf > %t.mlir
// RUN: rope-opt %t.mlir --convert-rope-to-linalg | %python %S/check_frequency_tables.py | FileCheck %s --check-prefix=TABLES
// RUN: rope-opt %t.mlir | %python %S/check_frequency_tables.py | FileCheck %s --check-prefix=MAGNITUDES

// The real-model fixtures (python/tests/fixtures/hf: Llama 2/3.1/3.2,
// Mistral, Qwen2.5 YaRN, Qwen2-VL and Qwen3-VL M-RoPE, Phi-2, Phi-3-vision
// and Phi-3.5 LongRoPE, DeepSeek-V2-Lite/V3 YaRN with mscale, GPT-NeoX,
// GPT-J, Gemma 3, Vicuna 16k) through the Hugging Face importer into
// rope.apply, lowered, and their folded theta tables and magnitudes checked
// against the float64 reference computed from the config itself. The
// dynamic-NTK fixture has no folded table (tested by execution in
// python/tests/api/test_hf_configs.py).

// TABLES: OK: 16 functions, 18 tables, 0 magnitudes
// MAGNITUDES: OK: 16 functions, 0 tables, 16 magnitudes
