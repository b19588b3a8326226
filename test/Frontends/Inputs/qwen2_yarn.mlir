#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
module {
  func.func @main(%arg0: tensor<2x4x8x32xf32>, %arg1: tensor<2x2x8x32xf32>, %arg2: tensor<2x8xi64>) -> (tensor<2x4x8x32xf32>, tensor<2x2x8x32xf32>) {
    %cst = arith.constant 1.1386294361119891 : f64
    %cst_0 = arith.constant dense_resource<torch_tensor_16_torch.float32> : tensor<16xf32>
    %expanded = tensor.expand_shape %arg2 [[0], [1, 2]] output_shape [2, 8, 1] : tensor<2x8xi64> into tensor<2x8x1xi64>
    %0 = tensor.empty() : tensor<2x8x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x8x1xi64>) outs(%0 : tensor<2x8x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %21 = arith.sitofp %in : i64 to f32
      linalg.yield %21 : f32
    } -> tensor<2x8x1xf32>
    %2 = tensor.empty() : tensor<2x8x16xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %cst_0 : tensor<2x8x1xf32>, tensor<16xf32>) outs(%2 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %21 = arith.mulf %in, %in_8 : f32
      linalg.yield %21 : f32
    } -> tensor<2x8x16xf32>
    %concat = tensor.concat dim(2) %3, %3 : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x32xf32>
    %4 = tensor.empty() : tensor<2x8x32xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x32xf32>) outs(%4 : tensor<2x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = math.cos %in : f32
      linalg.yield %21 : f32
    } -> tensor<2x8x32xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5 : tensor<2x8x32xf32>) outs(%4 : tensor<2x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = arith.truncf %cst : f64 to f32
      %22 = arith.mulf %in, %21 : f32
      linalg.yield %22 : f32
    } -> tensor<2x8x32xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x32xf32>) outs(%4 : tensor<2x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = math.sin %in : f32
      linalg.yield %21 : f32
    } -> tensor<2x8x32xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%7 : tensor<2x8x32xf32>) outs(%4 : tensor<2x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = arith.truncf %cst : f64 to f32
      %22 = arith.mulf %in, %21 : f32
      linalg.yield %22 : f32
    } -> tensor<2x8x32xf32>
    %expanded_1 = tensor.expand_shape %6 [[0], [1, 2], [3]] output_shape [2, 1, 8, 32] : tensor<2x8x32xf32> into tensor<2x1x8x32xf32>
    %expanded_2 = tensor.expand_shape %8 [[0], [1, 2], [3]] output_shape [2, 1, 8, 32] : tensor<2x8x32xf32> into tensor<2x1x8x32xf32>
    %9 = tensor.empty() : tensor<2x4x8x32xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %expanded_1 : tensor<2x4x8x32xf32>, tensor<2x1x8x32xf32>) outs(%9 : tensor<2x4x8x32xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %21 = arith.mulf %in, %in_8 : f32
      linalg.yield %21 : f32
    } -> tensor<2x4x8x32xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %extracted_slice_3 = tensor.extract_slice %arg0[0, 0, 0, 16] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %11 = tensor.empty() : tensor<2x4x8x16xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_3 : tensor<2x4x8x16xf32>) outs(%11 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = arith.negf %in : f32
      linalg.yield %21 : f32
    } -> tensor<2x4x8x16xf32>
    %concat_4 = tensor.concat dim(3) %12, %extracted_slice : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x32xf32>
    %13 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_4, %expanded_2 : tensor<2x4x8x32xf32>, tensor<2x1x8x32xf32>) outs(%9 : tensor<2x4x8x32xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %21 = arith.mulf %in, %in_8 : f32
      linalg.yield %21 : f32
    } -> tensor<2x4x8x32xf32>
    %14 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10, %13 : tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>) outs(%9 : tensor<2x4x8x32xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %21 = arith.addf %in, %in_8 : f32
      linalg.yield %21 : f32
    } -> tensor<2x4x8x32xf32>
    %15 = tensor.empty() : tensor<2x2x8x32xf32>
    %16 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1, %expanded_1 : tensor<2x2x8x32xf32>, tensor<2x1x8x32xf32>) outs(%15 : tensor<2x2x8x32xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %21 = arith.mulf %in, %in_8 : f32
      linalg.yield %21 : f32
    } -> tensor<2x2x8x32xf32>
    %extracted_slice_5 = tensor.extract_slice %arg1[0, 0, 0, 0] [2, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x32xf32> to tensor<2x2x8x16xf32>
    %extracted_slice_6 = tensor.extract_slice %arg1[0, 0, 0, 16] [2, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x32xf32> to tensor<2x2x8x16xf32>
    %17 = tensor.empty() : tensor<2x2x8x16xf32>
    %18 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_6 : tensor<2x2x8x16xf32>) outs(%17 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = arith.negf %in : f32
      linalg.yield %21 : f32
    } -> tensor<2x2x8x16xf32>
    %concat_7 = tensor.concat dim(3) %18, %extracted_slice_5 : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x32xf32>
    %19 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_7, %expanded_2 : tensor<2x2x8x32xf32>, tensor<2x1x8x32xf32>) outs(%15 : tensor<2x2x8x32xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %21 = arith.mulf %in, %in_8 : f32
      linalg.yield %21 : f32
    } -> tensor<2x2x8x32xf32>
    %20 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%16, %19 : tensor<2x2x8x32xf32>, tensor<2x2x8x32xf32>) outs(%15 : tensor<2x2x8x32xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %21 = arith.addf %in, %in_8 : f32
      linalg.yield %21 : f32
    } -> tensor<2x2x8x32xf32>
    return %14, %20 : tensor<2x4x8x32xf32>, tensor<2x2x8x32xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_16_torch.float32: "0x040000000000803F66F0D73E9BE8213E8718363DCDCCCC3CC255663CE386013C39AD913B0AD7233B9C44B83A383E4F3A2815E9396F128339166A133960CBA53853773A38"
    }
  }
#-}
