#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
module {
  func.func @main(%arg0: tensor<?x4x?x32xf32>, %arg1: tensor<?x2x?x32xf32>, %arg2: tensor<?x?xi64>) -> (tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %cst = arith.constant dense_resource<torch_tensor_16_torch.float32> : tensor<16xf32>
    %dim = tensor.dim %arg2, %c0 : tensor<?x?xi64>
    %dim_0 = tensor.dim %arg2, %c1 : tensor<?x?xi64>
    %expanded = tensor.expand_shape %arg2 [[0], [1, 2]] output_shape [%dim, %dim_0, 1] : tensor<?x?xi64> into tensor<?x?x1xi64>
    %0 = tensor.empty(%dim, %dim_0) : tensor<?x?x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<?x?x1xi64>) outs(%0 : tensor<?x?x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %33 = arith.sitofp %in : i64 to f32
      linalg.yield %33 : f32
    } -> tensor<?x?x1xf32>
    %2 = tensor.empty(%dim, %dim_0) : tensor<?x?x16xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %cst : tensor<?x?x1xf32>, tensor<16xf32>) outs(%2 : tensor<?x?x16xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %33 = arith.mulf %in, %in_18 : f32
      linalg.yield %33 : f32
    } -> tensor<?x?x16xf32>
    %concat = tensor.concat dim(2) %3, %3 : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x32xf32>
    %dim_1 = tensor.dim %3, %c0 : tensor<?x?x16xf32>
    %dim_2 = tensor.dim %3, %c1 : tensor<?x?x16xf32>
    %4 = tensor.empty(%dim_1, %dim_2) : tensor<?x?x32xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<?x?x32xf32>) outs(%4 : tensor<?x?x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %33 = math.cos %in : f32
      linalg.yield %33 : f32
    } -> tensor<?x?x32xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<?x?x32xf32>) outs(%4 : tensor<?x?x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %33 = math.sin %in : f32
      linalg.yield %33 : f32
    } -> tensor<?x?x32xf32>
    %expanded_3 = tensor.expand_shape %5 [[0], [1, 2], [3]] output_shape [%dim_1, 1, %dim_2, 32] : tensor<?x?x32xf32> into tensor<?x1x?x32xf32>
    %expanded_4 = tensor.expand_shape %6 [[0], [1, 2], [3]] output_shape [%dim_1, 1, %dim_2, 32] : tensor<?x?x32xf32> into tensor<?x1x?x32xf32>
    %dim_5 = tensor.dim %arg0, %c0 : tensor<?x4x?x32xf32>
    %dim_6 = tensor.dim %arg0, %c2 : tensor<?x4x?x32xf32>
    %7 = arith.cmpi eq, %dim_5, %dim_1 : index
    cf.assert %7, "mismatched size for broadcast"
    %8 = arith.cmpi eq, %dim_6, %dim_2 : index
    cf.assert %8, "mismatched size for broadcast"
    %9 = tensor.empty(%dim_5, %dim_6) : tensor<?x4x?x32xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %expanded_3 : tensor<?x4x?x32xf32>, tensor<?x1x?x32xf32>) outs(%9 : tensor<?x4x?x32xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %33 = arith.mulf %in, %in_18 : f32
      linalg.yield %33 : f32
    } -> tensor<?x4x?x32xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [%dim_5, 4, %dim_6, 16] [1, 1, 1, 1] : tensor<?x4x?x32xf32> to tensor<?x4x?x16xf32>
    %extracted_slice_7 = tensor.extract_slice %arg0[0, 0, 0, 16] [%dim_5, 4, %dim_6, 16] [1, 1, 1, 1] : tensor<?x4x?x32xf32> to tensor<?x4x?x16xf32>
    %11 = tensor.empty(%dim_5, %dim_6) : tensor<?x4x?x16xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_7 : tensor<?x4x?x16xf32>) outs(%11 : tensor<?x4x?x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %33 = arith.negf %in : f32
      linalg.yield %33 : f32
    } -> tensor<?x4x?x16xf32>
    %concat_8 = tensor.concat dim(3) %12, %extracted_slice : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x32xf32>
    %dim_9 = tensor.dim %12, %c0 : tensor<?x4x?x16xf32>
    %dim_10 = tensor.dim %12, %c2 : tensor<?x4x?x16xf32>
    %13 = arith.cmpi eq, %dim_9, %dim_1 : index
    cf.assert %13, "mismatched size for broadcast"
    %14 = arith.cmpi eq, %dim_10, %dim_2 : index
    cf.assert %14, "mismatched size for broadcast"
    %15 = tensor.empty(%dim_9, %dim_10) : tensor<?x4x?x32xf32>
    %16 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_8, %expanded_4 : tensor<?x4x?x32xf32>, tensor<?x1x?x32xf32>) outs(%15 : tensor<?x4x?x32xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %33 = arith.mulf %in, %in_18 : f32
      linalg.yield %33 : f32
    } -> tensor<?x4x?x32xf32>
    %17 = arith.cmpi eq, %dim_5, %dim_9 : index
    cf.assert %17, "mismatched size for broadcast"
    %18 = arith.cmpi eq, %dim_6, %dim_10 : index
    cf.assert %18, "mismatched size for broadcast"
    %19 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10, %16 : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>) outs(%9 : tensor<?x4x?x32xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %33 = arith.addf %in, %in_18 : f32
      linalg.yield %33 : f32
    } -> tensor<?x4x?x32xf32>
    %dim_11 = tensor.dim %arg1, %c0 : tensor<?x2x?x32xf32>
    %dim_12 = tensor.dim %arg1, %c2 : tensor<?x2x?x32xf32>
    %20 = arith.cmpi eq, %dim_11, %dim_1 : index
    cf.assert %20, "mismatched size for broadcast"
    %21 = arith.cmpi eq, %dim_12, %dim_2 : index
    cf.assert %21, "mismatched size for broadcast"
    %22 = tensor.empty(%dim_11, %dim_12) : tensor<?x2x?x32xf32>
    %23 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1, %expanded_3 : tensor<?x2x?x32xf32>, tensor<?x1x?x32xf32>) outs(%22 : tensor<?x2x?x32xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %33 = arith.mulf %in, %in_18 : f32
      linalg.yield %33 : f32
    } -> tensor<?x2x?x32xf32>
    %extracted_slice_13 = tensor.extract_slice %arg1[0, 0, 0, 0] [%dim_11, 2, %dim_12, 16] [1, 1, 1, 1] : tensor<?x2x?x32xf32> to tensor<?x2x?x16xf32>
    %extracted_slice_14 = tensor.extract_slice %arg1[0, 0, 0, 16] [%dim_11, 2, %dim_12, 16] [1, 1, 1, 1] : tensor<?x2x?x32xf32> to tensor<?x2x?x16xf32>
    %24 = tensor.empty(%dim_11, %dim_12) : tensor<?x2x?x16xf32>
    %25 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_14 : tensor<?x2x?x16xf32>) outs(%24 : tensor<?x2x?x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %33 = arith.negf %in : f32
      linalg.yield %33 : f32
    } -> tensor<?x2x?x16xf32>
    %concat_15 = tensor.concat dim(3) %25, %extracted_slice_13 : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x32xf32>
    %dim_16 = tensor.dim %25, %c0 : tensor<?x2x?x16xf32>
    %dim_17 = tensor.dim %25, %c2 : tensor<?x2x?x16xf32>
    %26 = arith.cmpi eq, %dim_16, %dim_1 : index
    cf.assert %26, "mismatched size for broadcast"
    %27 = arith.cmpi eq, %dim_17, %dim_2 : index
    cf.assert %27, "mismatched size for broadcast"
    %28 = tensor.empty(%dim_16, %dim_17) : tensor<?x2x?x32xf32>
    %29 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_15, %expanded_4 : tensor<?x2x?x32xf32>, tensor<?x1x?x32xf32>) outs(%28 : tensor<?x2x?x32xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %33 = arith.mulf %in, %in_18 : f32
      linalg.yield %33 : f32
    } -> tensor<?x2x?x32xf32>
    %30 = arith.cmpi eq, %dim_11, %dim_16 : index
    cf.assert %30, "mismatched size for broadcast"
    %31 = arith.cmpi eq, %dim_12, %dim_17 : index
    cf.assert %31, "mismatched size for broadcast"
    %32 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23, %29 : tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>) outs(%22 : tensor<?x2x?x32xf32>) {
    ^bb0(%in: f32, %in_18: f32, %out: f32):
      %33 = arith.addf %in, %in_18 : f32
      linalg.yield %33 : f32
    } -> tensor<?x2x?x32xf32>
    return %19, %32 : tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_16_torch.float32: "0x040000000000803F9AF50F3F9BE8A13E8718363ECDCCCC3DC255663DE386013D39AD913C0AD7233C9C44B83B383E4F3B2815E93A6F12833A166A133A60CBA53953773A39"
    }
  }
#-}
