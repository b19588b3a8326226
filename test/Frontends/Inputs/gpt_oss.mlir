#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
module {
  func.func @main(%arg0: tensor<2x4x8x32xf32>, %arg1: tensor<2x2x8x32xf32>, %arg2: tensor<2x8xi64>) -> (tensor<2x4x8x32xf32>, tensor<2x2x8x32xf32>) {
    %cst = arith.constant 1.3465735902799727 : f64
    %cst_0 = arith.constant dense_resource<torch_tensor_16_torch.float32> : tensor<16xf32>
    %expanded = tensor.expand_shape %arg2 [[0], [1, 2]] output_shape [2, 8, 1] : tensor<2x8xi64> into tensor<2x8x1xi64>
    %0 = tensor.empty() : tensor<2x8x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x8x1xi64>) outs(%0 : tensor<2x8x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %22 = arith.sitofp %in : i64 to f32
      linalg.yield %22 : f32
    } -> tensor<2x8x1xf32>
    %2 = tensor.empty() : tensor<2x8x16xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %cst_0 : tensor<2x8x1xf32>, tensor<16xf32>) outs(%2 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.mulf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x8x16xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3 : tensor<2x8x16xf32>) outs(%2 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = math.cos %in : f32
      linalg.yield %22 : f32
    } -> tensor<2x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4 : tensor<2x8x16xf32>) outs(%2 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.truncf %cst : f64 to f32
      %23 = arith.mulf %in, %22 : f32
      linalg.yield %23 : f32
    } -> tensor<2x8x16xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3 : tensor<2x8x16xf32>) outs(%2 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = math.sin %in : f32
      linalg.yield %22 : f32
    } -> tensor<2x8x16xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6 : tensor<2x8x16xf32>) outs(%2 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.truncf %cst : f64 to f32
      %23 = arith.mulf %in, %22 : f32
      linalg.yield %23 : f32
    } -> tensor<2x8x16xf32>
    %expanded_1 = tensor.expand_shape %5 [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %expanded_2 = tensor.expand_shape %7 [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %extracted_slice_3 = tensor.extract_slice %arg0[0, 0, 0, 16] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %8 = tensor.empty() : tensor<2x4x8x16xf32>
    %9 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice, %expanded_1 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%8 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.mulf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x4x8x16xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_3, %expanded_2 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%8 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.mulf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x4x8x16xf32>
    %11 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9, %10 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%8 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.subf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x4x8x16xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_3, %expanded_1 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%8 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.mulf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x4x8x16xf32>
    %13 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice, %expanded_2 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%8 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.mulf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x4x8x16xf32>
    %14 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12, %13 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%8 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.addf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x4x8x16xf32>
    %concat = tensor.concat dim(3) %11, %14 : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x32xf32>
    %extracted_slice_4 = tensor.extract_slice %arg1[0, 0, 0, 0] [2, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x32xf32> to tensor<2x2x8x16xf32>
    %extracted_slice_5 = tensor.extract_slice %arg1[0, 0, 0, 16] [2, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x32xf32> to tensor<2x2x8x16xf32>
    %15 = tensor.empty() : tensor<2x2x8x16xf32>
    %16 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_4, %expanded_1 : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%15 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.mulf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x8x16xf32>
    %17 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_5, %expanded_2 : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%15 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.mulf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x8x16xf32>
    %18 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%16, %17 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) outs(%15 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.subf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x8x16xf32>
    %19 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_5, %expanded_1 : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%15 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.mulf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x8x16xf32>
    %20 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_4, %expanded_2 : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%15 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.mulf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x8x16xf32>
    %21 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19, %20 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) outs(%15 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.addf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x8x16xf32>
    %concat_6 = tensor.concat dim(3) %18, %21 : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x32xf32>
    return %concat, %concat_6 : tensor<2x4x8x32xf32>, tensor<2x2x8x32xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_16_torch.float32: "0x040000000000803FA216F33EFAD3663E9F2FDB3D9421503D6F649E3C40A8DE3B0338093B3C54EF39C6AD2038289398372CE110378C92893645A2023628177835EB93EB34"
    }
  }
#-}
