#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
module {
  func.func @main(%arg0: tensor<2x2x3x32xf32>, %arg1: tensor<2x3xi64>, %arg2: tensor<2x2x16x32xf32>, %arg3: tensor<i64>) -> tensor<2x2x16x32xf32> {
    %c13_i64 = arith.constant 13 : i64
    %c16_i64 = arith.constant 16 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant dense_resource<torch_tensor_16_torch.float32> : tensor<16xf32>
    %expanded = tensor.expand_shape %cst [[0, 1, 2]] output_shape [1, 16, 1] : tensor<16xf32> into tensor<1x16x1xf32>
    %expanded_0 = tensor.expand_shape %arg1 [[0], [1, 2]] output_shape [2, 1, 3] : tensor<2x3xi64> into tensor<2x1x3xi64>
    %0 = tensor.empty() : tensor<2x1x3xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_0 : tensor<2x1x3xi64>) outs(%0 : tensor<2x1x3xf32>) {
    ^bb0(%in: i64, %out: f32):
      %22 = arith.sitofp %in : i64 to f32
      linalg.yield %22 : f32
    } -> tensor<2x1x3xf32>
    %2 = tensor.empty() : tensor<2x16x3xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded, %1 : tensor<1x16x1xf32>, tensor<2x1x3xf32>) outs(%2 : tensor<2x16x3xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %22 = arith.mulf %in, %in_5 : f32
      linalg.yield %22 : f32
    } -> tensor<2x16x3xf32>
    %4 = tensor.empty() : tensor<2x3x16xf32>
    %transposed = linalg.transpose ins(%3 : tensor<2x16x3xf32>) outs(%4 : tensor<2x3x16xf32>) permutation = [0, 2, 1] 
    %concat = tensor.concat dim(2) %transposed, %transposed : (tensor<2x3x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x32xf32>
    %5 = tensor.empty() : tensor<2x3x32xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x3x32xf32>) outs(%5 : tensor<2x3x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = math.cos %in : f32
      linalg.yield %22 : f32
    } -> tensor<2x3x32xf32>
    %expanded_1 = tensor.expand_shape %6 [[0], [1, 2], [3]] output_shape [2, 1, 3, 32] : tensor<2x3x32xf32> into tensor<2x1x3x32xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x3x32xf32>) outs(%5 : tensor<2x3x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = math.sin %in : f32
      linalg.yield %22 : f32
    } -> tensor<2x3x32xf32>
    %expanded_2 = tensor.expand_shape %7 [[0], [1, 2], [3]] output_shape [2, 1, 3, 32] : tensor<2x3x32xf32> into tensor<2x1x3x32xf32>
    %8 = tensor.empty() : tensor<2x2x3x32xf32>
    %9 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %expanded_1 : tensor<2x2x3x32xf32>, tensor<2x1x3x32xf32>) outs(%8 : tensor<2x2x3x32xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %22 = arith.mulf %in, %in_5 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x3x32xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 16] [2, 2, 3, 16] [1, 1, 1, 1] : tensor<2x2x3x32xf32> to tensor<2x2x3x16xf32>
    %10 = tensor.empty() : tensor<2x2x3x16xf32>
    %11 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice : tensor<2x2x3x16xf32>) outs(%10 : tensor<2x2x3x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.negf %in : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x3x16xf32>
    %extracted_slice_3 = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 2, 3, 16] [1, 1, 1, 1] : tensor<2x2x3x32xf32> to tensor<2x2x3x16xf32>
    %concat_4 = tensor.concat dim(3) %11, %extracted_slice_3 : (tensor<2x2x3x16xf32>, tensor<2x2x3x16xf32>) -> tensor<2x2x3x32xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_4, %expanded_2 : tensor<2x2x3x32xf32>, tensor<2x1x3x32xf32>) outs(%8 : tensor<2x2x3x32xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %22 = arith.mulf %in, %in_5 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x3x32xf32>
    %13 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9, %12 : tensor<2x2x3x32xf32>, tensor<2x2x3x32xf32>) outs(%8 : tensor<2x2x3x32xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %22 = arith.addf %in, %in_5 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x3x32xf32>
    %extracted = tensor.extract %arg3[] : tensor<i64>
    %14 = arith.cmpi sge, %extracted, %c0_i64 : i64
    cf.assert %14, "Runtime assertion failed for expression u0 >= 0 on node 'ge_1'"
    %15 = arith.cmpi sle, %extracted, %c13_i64 : i64
    cf.assert %15, "Runtime assertion failed for expression u0 <= 13 on node 'le_1'"
    %16 = arith.addi %extracted, %c16_i64 : i64
    %17 = arith.cmpi sge, %extracted, %c0_i64 : i64
    %18 = arith.select %17, %extracted, %16 : i64
    %19 = arith.maxsi %18, %c0_i64 : i64
    %20 = arith.minsi %19, %c16_i64 : i64
    %21 = arith.index_cast %20 : i64 to index
    %inserted_slice = tensor.insert_slice %13 into %arg2[0, 0, %21, 0] [2, 2, 3, 32] [1, 1, 1, 1] : tensor<2x2x3x32xf32> into tensor<2x2x16x32xf32>
    return %inserted_slice : tensor<2x2x16x32xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_16_torch.float32: "0x040000000000803F9AF50F3F9BE8A13E8718363ECDCCCC3DC255663DE386013D39AD913C0AD7233C9C44B83B383E4F3B2815E93A6F12833A166A133A60CBA53953773A39"
    }
  }
#-}
