// RUN: rope-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the rope.attention / rope.online_attention
// verifier (AttentionOps.cpp), including each reason AttentionDims gives
// for maps that do not describe attention.

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @map_count(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op expected 4 indexing maps (query, key, value, [mask], [query_positions], [sinks], output), got 3}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @map_dims(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op indexing map of key must have 6 dims and no symbols, got}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2 + 1, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @not_permutation(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op indexing map of key must be a projected permutation, got}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @map_rank(%q: tensor<1x2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op indexing map of key has 4 results but the operand has rank 3}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @size_mismatch(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op dim 3 of key has size 16 but d3 has size 8 in query}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @query_dim_not_query_only(%q: tensor<1x2x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x2x4x8xf32>) -> tensor<1x2x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op indexing maps do not describe attention: query_dim = 1 is not a loop in the query and output maps only}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64, query_dim = 1 : i64} -> tensor<1x2x2x4x8xf32>
  return %o : tensor<1x2x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @gqa_without_query_dim(%q: tensor<1x2x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x2x4x8xf32>) -> tensor<1x2x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op indexing maps do not describe attention: loops d2 and d3 are both in the query and output maps only: set query_dim to the one that is the queries}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x2x4x8xf32>
  return %o : tensor<1x2x2x4x8xf32>
}

// -----

#q = affine_map<(b, m, k1, k1b, k2, n) -> (b, m, k1, k1b)>
#k = affine_map<(b, m, k1, k1b, k2, n) -> (b, k2, k1, k1b)>
#v = affine_map<(b, m, k1, k1b, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k1b, k2, n) -> (b, m, n)>
func.func @two_channel_dims(%q: tensor<1x4x2x8xf32>, %k: tensor<1x6x2x8xf32>, %v: tensor<1x6x8xf32>, %init: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op indexing maps do not describe attention: more than one channel (k1: query and key only) dim (d2 and d3)}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x4x2x8xf32>, tensor<1x6x2x8xf32>, tensor<1x6x8xf32>) outs(%init : tensor<1x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

#q = affine_map<(b, m, k1, k2, k2b, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, k2b, n) -> (b, k2, k2b, k1)>
#v = affine_map<(b, m, k1, k2, k2b, n) -> (b, k2, k2b, n)>
#o = affine_map<(b, m, k1, k2, k2b, n) -> (b, m, n)>
func.func @two_key_dims(%q: tensor<1x4x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %init: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op indexing maps do not describe attention: more than one key (k2: key and value only) dim (d3 and d4)}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x4x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) outs(%init : tensor<1x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

#q = affine_map<(b, m, k1, k2, n, nb) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n, nb) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n, nb) -> (b, k2, n, nb)>
#o = affine_map<(b, m, k1, k2, n, nb) -> (b, m, n, nb)>
func.func @two_value_channel_dims(%q: tensor<1x4x8xf32>, %k: tensor<1x6x8xf32>, %v: tensor<1x6x2x4xf32>, %init: tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32> {
  // expected-error @+1 {{'rope.attention' op indexing maps do not describe attention: more than one value channel (n: value and output only) dim (d4 and d5)}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x4x8xf32>, tensor<1x6x8xf32>, tensor<1x6x2x4xf32>) outs(%init : tensor<1x4x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x4x2x4xf32>
  return %o : tensor<1x4x2x4xf32>
}

// -----

#q = affine_map<(b, m, k1, k2, n, x) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n, x) -> (b, k2, k1, x)>
#v = affine_map<(b, m, k1, k2, n, x) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n, x) -> (b, m, n)>
func.func @no_role(%q: tensor<1x4x8xf32>, %k: tensor<1x6x8x2xf32>, %v: tensor<1x6x8xf32>, %init: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op indexing maps do not describe attention: loop d5 has no role: a batch dim must be in the query and output maps}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x4x8xf32>, tensor<1x6x8x2xf32>, tensor<1x6x8xf32>) outs(%init : tensor<1x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, m, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, m, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
func.func @no_query_dim(%q: tensor<1x4x8xf32>, %k: tensor<1x4x6x8xf32>, %v: tensor<1x4x6x8xf32>, %init: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op indexing maps do not describe attention: no query dim (m: in the query and output maps only)}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x4x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) outs(%init : tensor<1x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

#q = affine_map<(b, m, k2, n) -> (b, m)>
#k = affine_map<(b, m, k2, n) -> (b, k2)>
#v = affine_map<(b, m, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k2, n) -> (b, m, n)>
func.func @no_channel_dim(%q: tensor<1x4xf32>, %k: tensor<1x6xf32>, %v: tensor<1x6x8xf32>, %init: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op indexing maps do not describe attention: no channel dim (k1: in the query and key maps only)}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x4xf32>, tensor<1x6xf32>, tensor<1x6x8xf32>) outs(%init : tensor<1x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

#q = affine_map<(b, m, k1, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, n) -> (b, k1)>
#v = affine_map<(b, m, k1, n) -> (b, n)>
#o = affine_map<(b, m, k1, n) -> (b, m, n)>
func.func @no_key_dim(%q: tensor<1x4x8xf32>, %k: tensor<1x8xf32>, %v: tensor<1x8xf32>, %init: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op indexing maps do not describe attention: no key dim (k2: in the key and value maps only)}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x4x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) outs(%init : tensor<1x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

#q = affine_map<(b, m, k1, k2) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2) -> (b, k2)>
#o = affine_map<(b, m, k1, k2) -> (b, m)>
func.func @no_value_channel_dim(%q: tensor<1x4x8xf32>, %k: tensor<1x6x8xf32>, %v: tensor<1x6xf32>, %init: tensor<1x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'rope.attention' op indexing maps do not describe attention: no value channel dim (n: in the value and output maps only)}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x4x8xf32>, tensor<1x6x8xf32>, tensor<1x6xf32>) outs(%init : tensor<1x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x4xf32>
  return %o : tensor<1x4xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @result_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf16> {
  // expected-error @+1 {{'rope.attention' op result type 'tensor<1x2x4x8xf16>' must match init type 'tensor<1x2x4x8xf32>'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf16>
  return %o : tensor<1x2x4x8xf16>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @integer_query(%q: tensor<1x2x4x8xi32>, %k: tensor<1x2x6x8xi32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op query element type must be f16, bf16, f32 or f64, got 'i32'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xi32>, tensor<1x2x6x8xi32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @integer_key(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xi8>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op key element type must be f16, bf16, f32 or f64, got 'i8'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xi8>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @integer_value(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xi32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op value element type must be f16, bf16, f32 or f64, got 'i32'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xi32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @query_key_types(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf16>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op query and key element types differ: 'f32' vs 'f16'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf16>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @integer_output(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xi32>) -> tensor<1x2x4x8xi32> {
  // expected-error @+1 {{'rope.attention' op output element type must be f16, bf16, f32 or f64, got 'i32'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xi32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xi32>
  return %o : tensor<1x2x4x8xi32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#mask = affine_map<(b, h, m, k1, k2, n) -> (m, k1)>
func.func @mask_channel(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %mask: tensor<4x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{indexes a channel dim (k1 or n)}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) mask(%mask : tensor<4x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #mask, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#mask = affine_map<(b, h, m, k1, k2, n) -> (m, k2)>
func.func @mask_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %mask: tensor<4x6xi8>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op mask element type must be i1 (true keeps the key) or a float (added to the score), got 'i8'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) mask(%mask : tensor<4x6xi8>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #mask, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#pos = affine_map<(b, h, m, k1, k2, n) -> (b, k2)>
func.func @positions_key_dim(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %pos: tensor<1x6xi64>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{may index only batch dims and the query dim}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) query_positions(%pos : tensor<1x6xi64>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #pos, #o], scale = 1.0 : f64, causal} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#pos = affine_map<(b, h, m, k1, k2, n) -> (b, m)>
func.func @positions_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %pos: tensor<1x4xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op query_positions element type must be an integer of 2 to 64 bits, got 'f32'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) query_positions(%pos : tensor<1x4xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #pos, #o], scale = 1.0 : f64, causal} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#pos = affine_map<(b, h, m, k1, k2, n) -> (b, m)>
func.func @positions_i1(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %pos: tensor<1x4xi1>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op query_positions element type must be an integer of 2 to 64 bits, got 'i1'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) query_positions(%pos : tensor<1x4xi1>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #pos, #o], scale = 1.0 : f64, causal} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @offset_without_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %off: index, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op query_positions, query_offset and key_offset only position the causal/window mask; the op has neither}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) key_offset(%off) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#pos = affine_map<(b, h, m, k1, k2, n) -> (b, m)>
func.func @offset_and_positions(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %pos: tensor<1x4xi64>, %off: index, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op query_offset and query_positions both give the query positions}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) query_positions(%pos : tensor<1x4xi64>) query_offset(%off) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #pos, #o], scale = 1.0 : f64, causal} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @window_zero(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op window must be positive, got 0}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64, causal, window = 0 : i64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @window_without_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op window requires causal (keys kpos with qpos - window < kpos <= qpos)}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64, window = 4 : i64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @infinite_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op scale must be finite, got INF}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0x7FF0000000000000 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @region_arity(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op score region must take the score and one index per loop but k1 and n (5 arguments), got 3}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} {
  ^bb0(%s: f32, %i0: index, %i1: index):
    rope.yield %s : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @region_score_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op score region's first argument must have the accumulator type 'f32', got 'f16'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} {
  ^bb0(%s: f16, %b: index, %h: index, %m: index, %k2: index):
    %x = arith.extf %s : f16 to f32
    rope.yield %x : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @region_index_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op score region's index arguments must be index, got 'i64'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} {
  ^bb0(%s: f32, %b: index, %h: i64, %m: index, %k2: index):
    rope.yield %s : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @region_yield_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op score region must end in rope.yield of a 'f32'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} {
  ^bb0(%s: f32, %b: index, %h: index, %m: index, %k2: index):
    %x = arith.truncf %s : f32 to f16
    rope.yield %x : f16
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @accumulator_f64(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf64>, %init: tensor<1x2x4x8xf64>) -> tensor<1x2x4x8xf64> {
  // expected-error @+1 {{'rope.attention' op score region's first argument must have the accumulator type 'f64', got 'f32'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf64>) outs(%init : tensor<1x2x4x8xf64>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} {
  ^bb0(%s: f32, %b: index, %h: index, %m: index, %k2: index):
    rope.yield %s : f32
  } -> tensor<1x2x4x8xf64>
  return %o : tensor<1x2x4x8xf64>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @online_acc_type(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x6x8xf16>, %v: tensor<1x2x6x8xf16>, %acc: tensor<1x2x4x8xf16>, %max: tensor<1x2x4xf32>, %sum: tensor<1x2x4xf32>) {
  // expected-error @+1 {{'rope.online_attention' op acc element type must be the accumulator type 'f32', got 'f16'}}
  %a, %m, %s = rope.online_attention ins(%q, %k, %v : tensor<1x2x4x8xf16>, tensor<1x2x6x8xf16>, tensor<1x2x6x8xf16>) outs(%acc, %max, %sum : tensor<1x2x4x8xf16>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf16>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
  return
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @online_acc_f64(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %acc: tensor<1x2x4x8xf64>, %max: tensor<1x2x4xf32>, %sum: tensor<1x2x4xf32>) {
  // expected-error @+1 {{'rope.online_attention' op acc element type must be the accumulator type 'f32', got 'f64'}}
  %a, %m, %s = rope.online_attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%acc, %max, %sum : tensor<1x2x4x8xf64>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf64>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
  return
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @online_max_shape(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %acc: tensor<1x2x4x8xf32>, %max: tensor<1x2x8xf32>, %sum: tensor<1x2x4xf32>) {
  // expected-error @+1 {{'rope.online_attention' op max must be acc's type without the value channel dim ('tensor<1x2x4xf32>'), got 'tensor<1x2x8xf32>'}}
  %a, %m, %s = rope.online_attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%acc, %max, %sum : tensor<1x2x4x8xf32>, tensor<1x2x8xf32>, tensor<1x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>, tensor<1x2x8xf32>, tensor<1x2x4xf32>
  return
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @online_sum_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %acc: tensor<1x2x4x8xf32>, %max: tensor<1x2x4xf32>, %sum: tensor<1x2x4xf16>) {
  // expected-error @+1 {{'rope.online_attention' op sum must be acc's type without the value channel dim ('tensor<1x2x4xf32>'), got 'tensor<1x2x4xf16>'}}
  %a, %m, %s = rope.online_attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%acc, %max, %sum : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf16>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf16>
  return
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @online_results(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %acc: tensor<1x2x4x8xf32>, %max: tensor<1x2x4xf32>, %sum: tensor<1x2x4xf32>) {
  // expected-error @+1 {{'rope.online_attention' op result types must match acc, max and sum}}
  %a, %m, %s = rope.online_attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%acc, %max, %sum : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x?xf32>
  return
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @online_shared_check(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %acc: tensor<1x2x4x8xi32>, %max: tensor<1x2x4xf32>, %sum: tensor<1x2x4xf32>) {
  // expected-error @+1 {{'rope.online_attention' op acc element type must be f16, bf16, f32 or f64, got 'i32'}}
  %a, %m, %s = rope.online_attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%acc, %max, %sum : tensor<1x2x4x8xi32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xi32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
  return
}

// -----

// Sinks: one logit per softmax row's batch dims, never per query.
#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#s = affine_map<(b, h, m, k1, k2, n) -> (h, m)>
func.func @sinks_per_query(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %sinks: tensor<2x4xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op sinks map affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2)> may index only batch dims (one sink logit per row of the softmax, the same for every query)}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) sinks(%sinks : tensor<2x4xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #s, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#s = affine_map<(b, h, m, k1, k2, n) -> (h, k2)>
func.func @sinks_per_key(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %sinks: tensor<2x6xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op sinks map affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d4)> may index only batch dims}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) sinks(%sinks : tensor<2x6xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #s, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#s = affine_map<(b, h, m, k1, k2, n) -> (h)>
func.func @sinks_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %sinks: tensor<2xi32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op sinks element type must be f16, bf16, f32 or f64, got 'i32'}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) sinks(%sinks : tensor<2xi32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #s, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#s = affine_map<(b, h, m, k1, k2, n) -> (h)>
func.func @sinks_size(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %sinks: tensor<3xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op dim 0 of sinks has size 3 but d1 has size 2 in value}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) sinks(%sinks : tensor<3xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #s, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
func.func @sinks_map_missing(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %sinks: tensor<2xf32>, %init: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'rope.attention' op expected 5 indexing maps (query, key, value, [mask], [query_positions], [sinks], output), got 4}}
  %o = rope.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) sinks(%sinks : tensor<2xf32>) outs(%init : tensor<1x2x4x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 1.0 : f64} -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
