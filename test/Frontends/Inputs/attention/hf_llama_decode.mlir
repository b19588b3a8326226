#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0) -> (d0)>
#map4 = affine_map<(d0, d1) -> (d1)>
#map5 = affine_map<(d0, d1) -> (d0, d1)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#map8 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#map9 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map10 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map11 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
module {
  func.func @main(%arg0: tensor<2x4x1x16xf32>, %arg1: tensor<2x2x16x16xf32>, %arg2: tensor<2x2x16x16xf32>, %arg3: tensor<2x1xi64>, %arg4: tensor<2x1x1x16xf32>) -> tensor<2x1x4x16xf32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense_resource<torch_tensor_8_torch.float32> : tensor<8xf32>
    %cst_2 = arith.constant 2.500000e-01 : f32
    %expanded = tensor.expand_shape %arg3 [[0], [1, 2]] output_shape [2, 1, 1] : tensor<2x1xi64> into tensor<2x1x1xi64>
    %0 = tensor.empty() : tensor<2x1x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x1x1xi64>) outs(%0 : tensor<2x1x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %52 = arith.sitofp %in : i64 to f32
      linalg.yield %52 : f32
    } -> tensor<2x1x1xf32>
    %2 = tensor.empty() : tensor<2x1x8xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %cst_1 : tensor<2x1x1xf32>, tensor<8xf32>) outs(%2 : tensor<2x1x8xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %52 = arith.mulf %in, %in_22 : f32
      linalg.yield %52 : f32
    } -> tensor<2x1x8xf32>
    %concat = tensor.concat dim(2) %3, %3 : (tensor<2x1x8xf32>, tensor<2x1x8xf32>) -> tensor<2x1x16xf32>
    %4 = tensor.empty() : tensor<2x1x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x1x16xf32>) outs(%4 : tensor<2x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %52 = math.cos %in : f32
      linalg.yield %52 : f32
    } -> tensor<2x1x16xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x1x16xf32>) outs(%4 : tensor<2x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %52 = math.sin %in : f32
      linalg.yield %52 : f32
    } -> tensor<2x1x16xf32>
    %7 = tensor.empty() : tensor<16xi64>
    %8 = linalg.generic {indexing_maps = [#map3], iterator_types = ["parallel"]} outs(%7 : tensor<16xi64>) {
    ^bb0(%out: i64):
      %52 = linalg.index 0 : index
      %53 = arith.index_cast %52 : index to i64
      linalg.yield %53 : i64
    } -> tensor<16xi64>
    %9 = tensor.empty() : tensor<2x16xi64>
    %10 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<16xi64>) outs(%9 : tensor<2x16xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<2x16xi64>
    %expanded_3 = tensor.expand_shape %10 [[0], [1, 2]] output_shape [2, 16, 1] : tensor<2x16xi64> into tensor<2x16x1xi64>
    %11 = tensor.empty() : tensor<2x16x1xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_3 : tensor<2x16x1xi64>) outs(%11 : tensor<2x16x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %52 = arith.sitofp %in : i64 to f32
      linalg.yield %52 : f32
    } -> tensor<2x16x1xf32>
    %13 = tensor.empty() : tensor<2x16x8xf32>
    %14 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12, %cst_1 : tensor<2x16x1xf32>, tensor<8xf32>) outs(%13 : tensor<2x16x8xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %52 = arith.mulf %in, %in_22 : f32
      linalg.yield %52 : f32
    } -> tensor<2x16x8xf32>
    %concat_4 = tensor.concat dim(2) %14, %14 : (tensor<2x16x8xf32>, tensor<2x16x8xf32>) -> tensor<2x16x16xf32>
    %15 = tensor.empty() : tensor<2x16x16xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat_4 : tensor<2x16x16xf32>) outs(%15 : tensor<2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %52 = math.cos %in : f32
      linalg.yield %52 : f32
    } -> tensor<2x16x16xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat_4 : tensor<2x16x16xf32>) outs(%15 : tensor<2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %52 = math.sin %in : f32
      linalg.yield %52 : f32
    } -> tensor<2x16x16xf32>
    %expanded_5 = tensor.expand_shape %5 [[0], [1, 2], [3]] output_shape [2, 1, 1, 16] : tensor<2x1x16xf32> into tensor<2x1x1x16xf32>
    %expanded_6 = tensor.expand_shape %6 [[0], [1, 2], [3]] output_shape [2, 1, 1, 16] : tensor<2x1x16xf32> into tensor<2x1x1x16xf32>
    %18 = tensor.empty() : tensor<2x4x1x16xf32>
    %19 = linalg.generic {indexing_maps = [#map6, #map7, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %expanded_5 : tensor<2x4x1x16xf32>, tensor<2x1x1x16xf32>) outs(%18 : tensor<2x4x1x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %52 = arith.mulf %in, %in_22 : f32
      linalg.yield %52 : f32
    } -> tensor<2x4x1x16xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 1, 8] [1, 1, 1, 1] : tensor<2x4x1x16xf32> to tensor<2x4x1x8xf32>
    %extracted_slice_7 = tensor.extract_slice %arg0[0, 0, 0, 8] [2, 4, 1, 8] [1, 1, 1, 1] : tensor<2x4x1x16xf32> to tensor<2x4x1x8xf32>
    %20 = tensor.empty() : tensor<2x4x1x8xf32>
    %21 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_7 : tensor<2x4x1x8xf32>) outs(%20 : tensor<2x4x1x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %52 = arith.negf %in : f32
      linalg.yield %52 : f32
    } -> tensor<2x4x1x8xf32>
    %concat_8 = tensor.concat dim(3) %21, %extracted_slice : (tensor<2x4x1x8xf32>, tensor<2x4x1x8xf32>) -> tensor<2x4x1x16xf32>
    %22 = linalg.generic {indexing_maps = [#map6, #map7, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_8, %expanded_6 : tensor<2x4x1x16xf32>, tensor<2x1x1x16xf32>) outs(%18 : tensor<2x4x1x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %52 = arith.mulf %in, %in_22 : f32
      linalg.yield %52 : f32
    } -> tensor<2x4x1x16xf32>
    %23 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19, %22 : tensor<2x4x1x16xf32>, tensor<2x4x1x16xf32>) outs(%18 : tensor<2x4x1x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %52 = arith.addf %in, %in_22 : f32
      linalg.yield %52 : f32
    } -> tensor<2x4x1x16xf32>
    %expanded_9 = tensor.expand_shape %16 [[0], [1, 2], [3]] output_shape [2, 1, 16, 16] : tensor<2x16x16xf32> into tensor<2x1x16x16xf32>
    %expanded_10 = tensor.expand_shape %17 [[0], [1, 2], [3]] output_shape [2, 1, 16, 16] : tensor<2x16x16xf32> into tensor<2x1x16x16xf32>
    %24 = tensor.empty() : tensor<2x2x16x16xf32>
    %25 = linalg.generic {indexing_maps = [#map6, #map7, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1, %expanded_9 : tensor<2x2x16x16xf32>, tensor<2x1x16x16xf32>) outs(%24 : tensor<2x2x16x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %52 = arith.mulf %in, %in_22 : f32
      linalg.yield %52 : f32
    } -> tensor<2x2x16x16xf32>
    %extracted_slice_11 = tensor.extract_slice %arg1[0, 0, 0, 0] [2, 2, 16, 8] [1, 1, 1, 1] : tensor<2x2x16x16xf32> to tensor<2x2x16x8xf32>
    %extracted_slice_12 = tensor.extract_slice %arg1[0, 0, 0, 8] [2, 2, 16, 8] [1, 1, 1, 1] : tensor<2x2x16x16xf32> to tensor<2x2x16x8xf32>
    %26 = tensor.empty() : tensor<2x2x16x8xf32>
    %27 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_12 : tensor<2x2x16x8xf32>) outs(%26 : tensor<2x2x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %52 = arith.negf %in : f32
      linalg.yield %52 : f32
    } -> tensor<2x2x16x8xf32>
    %concat_13 = tensor.concat dim(3) %27, %extracted_slice_11 : (tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>) -> tensor<2x2x16x16xf32>
    %28 = linalg.generic {indexing_maps = [#map6, #map7, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_13, %expanded_10 : tensor<2x2x16x16xf32>, tensor<2x1x16x16xf32>) outs(%24 : tensor<2x2x16x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %52 = arith.mulf %in, %in_22 : f32
      linalg.yield %52 : f32
    } -> tensor<2x2x16x16xf32>
    %29 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%25, %28 : tensor<2x2x16x16xf32>, tensor<2x2x16x16xf32>) outs(%24 : tensor<2x2x16x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %52 = arith.addf %in, %in_22 : f32
      linalg.yield %52 : f32
    } -> tensor<2x2x16x16xf32>
    %30 = tensor.empty() : tensor<2x2x2x16x16xf32>
    %31 = linalg.generic {indexing_maps = [#map8, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%29 : tensor<2x2x16x16xf32>) outs(%30 : tensor<2x2x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x2x2x16x16xf32>
    %collapsed = tensor.collapse_shape %31 [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x16xf32> into tensor<2x4x16x16xf32>
    %32 = linalg.generic {indexing_maps = [#map8, #map9], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<2x2x16x16xf32>) outs(%30 : tensor<2x2x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x2x2x16x16xf32>
    %33 = tensor.empty() : tensor<2x4x16x16xf32>
    %transposed = linalg.transpose ins(%collapsed : tensor<2x4x16x16xf32>) outs(%33 : tensor<2x4x16x16xf32>) permutation = [0, 1, 3, 2] 
    %collapsed_14 = tensor.collapse_shape %23 [[0, 1], [2], [3]] : tensor<2x4x1x16xf32> into tensor<8x1x16xf32>
    %collapsed_15 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
    %34 = tensor.empty() : tensor<8x1x16xf32>
    %35 = linalg.fill ins(%cst : f32) outs(%34 : tensor<8x1x16xf32>) -> tensor<8x1x16xf32>
    %36 = linalg.batch_matmul ins(%collapsed_14, %collapsed_15 : tensor<8x1x16xf32>, tensor<8x16x16xf32>) outs(%35 : tensor<8x1x16xf32>) -> tensor<8x1x16xf32>
    %expanded_16 = tensor.expand_shape %36 [[0, 1], [2], [3]] output_shape [2, 4, 1, 16] : tensor<8x1x16xf32> into tensor<2x4x1x16xf32>
    %37 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_16 : tensor<2x4x1x16xf32>) outs(%18 : tensor<2x4x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %52 = arith.mulf %in, %cst_2 : f32
      linalg.yield %52 : f32
    } -> tensor<2x4x1x16xf32>
    %38 = linalg.generic {indexing_maps = [#map6, #map7, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%37, %arg4 : tensor<2x4x1x16xf32>, tensor<2x1x1x16xf32>) outs(%18 : tensor<2x4x1x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %52 = arith.addf %in, %in_22 : f32
      linalg.yield %52 : f32
    } -> tensor<2x4x1x16xf32>
    %39 = tensor.empty() : tensor<2x4x1xi64>
    %40 = linalg.fill ins(%c0_i64 : i64) outs(%39 : tensor<2x4x1xi64>) -> tensor<2x4x1xi64>
    %41 = tensor.empty() : tensor<2x4x1xf32>
    %42 = linalg.fill ins(%cst_0 : f32) outs(%41 : tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
    %43:2 = linalg.generic {indexing_maps = [#map6, #map10, #map10], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%38 : tensor<2x4x1x16xf32>) outs(%42, %40 : tensor<2x4x1xf32>, tensor<2x4x1xi64>) {
    ^bb0(%in: f32, %out: f32, %out_22: i64):
      %52 = linalg.index 3 : index
      %53 = arith.index_cast %52 : index to i64
      %54 = arith.maximumf %in, %out : f32
      %55 = arith.cmpf ogt, %in, %out : f32
      %56 = arith.select %55, %53, %out_22 : i64
      linalg.yield %54, %56 : f32, i64
    } -> (tensor<2x4x1xf32>, tensor<2x4x1xi64>)
    %expanded_17 = tensor.expand_shape %43#0 [[0], [1], [2, 3]] output_shape [2, 4, 1, 1] : tensor<2x4x1xf32> into tensor<2x4x1x1xf32>
    %44 = linalg.generic {indexing_maps = [#map6, #map11, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%38, %expanded_17 : tensor<2x4x1x16xf32>, tensor<2x4x1x1xf32>) outs(%18 : tensor<2x4x1x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %52 = arith.subf %in, %in_22 : f32
      linalg.yield %52 : f32
    } -> tensor<2x4x1x16xf32>
    %45 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%44 : tensor<2x4x1x16xf32>) outs(%18 : tensor<2x4x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %52 = math.exp %in : f32
      linalg.yield %52 : f32
    } -> tensor<2x4x1x16xf32>
    %46 = tensor.empty() : tensor<2x4x1x1xf32>
    %47 = linalg.fill ins(%cst : f32) outs(%46 : tensor<2x4x1x1xf32>) -> tensor<2x4x1x1xf32>
    %48 = linalg.generic {indexing_maps = [#map6, #map11], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%45 : tensor<2x4x1x16xf32>) outs(%47 : tensor<2x4x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %52 = arith.addf %in, %out : f32
      linalg.yield %52 : f32
    } -> tensor<2x4x1x1xf32>
    %49 = linalg.generic {indexing_maps = [#map6, #map11, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%45, %48 : tensor<2x4x1x16xf32>, tensor<2x4x1x1xf32>) outs(%18 : tensor<2x4x1x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %52 = arith.divf %in, %in_22 : f32
      linalg.yield %52 : f32
    } -> tensor<2x4x1x16xf32>
    %collapsed_18 = tensor.collapse_shape %49 [[0, 1], [2], [3]] : tensor<2x4x1x16xf32> into tensor<8x1x16xf32>
    %collapsed_19 = tensor.collapse_shape %32 [[0, 1, 2], [3], [4]] : tensor<2x2x2x16x16xf32> into tensor<8x16x16xf32>
    %50 = linalg.batch_matmul ins(%collapsed_18, %collapsed_19 : tensor<8x1x16xf32>, tensor<8x16x16xf32>) outs(%35 : tensor<8x1x16xf32>) -> tensor<8x1x16xf32>
    %expanded_20 = tensor.expand_shape %50 [[0, 1], [2], [3]] output_shape [2, 4, 1, 16] : tensor<8x1x16xf32> into tensor<2x4x1x16xf32>
    %51 = tensor.empty() : tensor<2x1x4x16xf32>
    %transposed_21 = linalg.transpose ins(%expanded_20 : tensor<2x4x1x16xf32>) outs(%51 : tensor<2x1x4x16xf32>) permutation = [0, 2, 1, 3] 
    return %transposed_21 : tensor<2x1x4x16xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_8_torch.float32: "0x040000000000803F9BE8A13ECDCCCC3DE386013D0AD7233C383E4F3B6F12833A60CBA539"
    }
  }
#-}
