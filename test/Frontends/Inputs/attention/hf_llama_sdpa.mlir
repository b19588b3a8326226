#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#map5 = affine_map<(d0) -> (d0)>
#map6 = affine_map<(d0, d1) -> (0, d1)>
#map7 = affine_map<(d0, d1) -> (d0, 0)>
#map8 = affine_map<(d0, d1) -> (d0, d1)>
#map9 = affine_map<(d0, d1) -> ()>
#map10 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#map11 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map12 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map13 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map14 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
module {
  func.func @main(%arg0: tensor<2x4x8x16xf32>, %arg1: tensor<2x2x8x16xf32>, %arg2: tensor<2x2x8x16xf32>, %arg3: tensor<2x8xi64>) -> tensor<2x8x4x16xf32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<2x4x8x8xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_4 = arith.constant dense<true> : tensor<8x8xi1>
    %cst_5 = arith.constant 0xFFF0000000000000 : f64
    %cst_6 = arith.constant dense_resource<torch_tensor_8_torch.float32> : tensor<8xf32>
    %cst_7 = arith.constant 5.000000e-01 : f32
    %expanded = tensor.expand_shape %arg3 [[0], [1, 2]] output_shape [2, 8, 1] : tensor<2x8xi64> into tensor<2x8x1xi64>
    %0 = tensor.empty() : tensor<2x8x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x8x1xi64>) outs(%0 : tensor<2x8x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %59 = arith.sitofp %in : i64 to f32
      linalg.yield %59 : f32
    } -> tensor<2x8x1xf32>
    %2 = tensor.empty() : tensor<2x8x8xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %cst_6 : tensor<2x8x1xf32>, tensor<8xf32>) outs(%2 : tensor<2x8x8xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %59 = arith.mulf %in, %in_25 : f32
      linalg.yield %59 : f32
    } -> tensor<2x8x8xf32>
    %concat = tensor.concat dim(2) %3, %3 : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
    %4 = tensor.empty() : tensor<2x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x16xf32>) outs(%4 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %59 = math.cos %in : f32
      linalg.yield %59 : f32
    } -> tensor<2x8x16xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x16xf32>) outs(%4 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %59 = math.sin %in : f32
      linalg.yield %59 : f32
    } -> tensor<2x8x16xf32>
    %expanded_8 = tensor.expand_shape %5 [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %expanded_9 = tensor.expand_shape %6 [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %7 = tensor.empty() : tensor<2x4x8x16xf32>
    %8 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %expanded_8 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %59 = arith.mulf %in, %in_25 : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x8x16xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
    %extracted_slice_10 = tensor.extract_slice %arg0[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
    %9 = tensor.empty() : tensor<2x4x8x8xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_10 : tensor<2x4x8x8xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %59 = arith.negf %in : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x8x8xf32>
    %concat_11 = tensor.concat dim(3) %10, %extracted_slice : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
    %11 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_11, %expanded_9 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %59 = arith.mulf %in, %in_25 : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x8x16xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8, %11 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %59 = arith.addf %in, %in_25 : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x8x16xf32>
    %13 = tensor.empty() : tensor<2x2x8x16xf32>
    %14 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1, %expanded_8 : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%13 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %59 = arith.mulf %in, %in_25 : f32
      linalg.yield %59 : f32
    } -> tensor<2x2x8x16xf32>
    %extracted_slice_12 = tensor.extract_slice %arg1[0, 0, 0, 0] [2, 2, 8, 8] [1, 1, 1, 1] : tensor<2x2x8x16xf32> to tensor<2x2x8x8xf32>
    %extracted_slice_13 = tensor.extract_slice %arg1[0, 0, 0, 8] [2, 2, 8, 8] [1, 1, 1, 1] : tensor<2x2x8x16xf32> to tensor<2x2x8x8xf32>
    %15 = tensor.empty() : tensor<2x2x8x8xf32>
    %16 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_13 : tensor<2x2x8x8xf32>) outs(%15 : tensor<2x2x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %59 = arith.negf %in : f32
      linalg.yield %59 : f32
    } -> tensor<2x2x8x8xf32>
    %concat_14 = tensor.concat dim(3) %16, %extracted_slice_12 : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x16xf32>
    %17 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_14, %expanded_9 : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%13 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %59 = arith.mulf %in, %in_25 : f32
      linalg.yield %59 : f32
    } -> tensor<2x2x8x16xf32>
    %18 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %17 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) outs(%13 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %59 = arith.addf %in, %in_25 : f32
      linalg.yield %59 : f32
    } -> tensor<2x2x8x16xf32>
    %19 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12 : tensor<2x4x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %59 = arith.mulf %in, %cst_7 : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x8x16xf32>
    %20 = tensor.empty() : tensor<8xi64>
    %21 = linalg.generic {indexing_maps = [#map5], iterator_types = ["parallel"]} outs(%20 : tensor<8xi64>) {
    ^bb0(%out: i64):
      %59 = linalg.index 0 : index
      %60 = arith.index_cast %59 : index to i64
      linalg.yield %60 : i64
    } -> tensor<8xi64>
    %expanded_15 = tensor.expand_shape %21 [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
    %expanded_16 = tensor.expand_shape %21 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
    %22 = tensor.empty() : tensor<8x8xi64>
    %23 = linalg.generic {indexing_maps = [#map6, #map7, #map8], iterator_types = ["parallel", "parallel"]} ins(%expanded_15, %expanded_16 : tensor<1x8xi64>, tensor<8x1xi64>) outs(%22 : tensor<8x8xi64>) {
    ^bb0(%in: i64, %in_25: i64, %out: i64):
      %59 = arith.subi %in, %in_25 : i64
      linalg.yield %59 : i64
    } -> tensor<8x8xi64>
    %24 = tensor.empty() : tensor<8x8xi1>
    %25 = linalg.generic {indexing_maps = [#map8, #map8], iterator_types = ["parallel", "parallel"]} ins(%23 : tensor<8x8xi64>) outs(%24 : tensor<8x8xi1>) {
    ^bb0(%in: i64, %out: i1):
      %59 = arith.cmpi sle, %in, %c0_i64 : i64
      linalg.yield %59 : i1
    } -> tensor<8x8xi1>
    %26 = linalg.generic {indexing_maps = [#map8, #map8, #map8], iterator_types = ["parallel", "parallel"]} ins(%25, %cst_4 : tensor<8x8xi1>, tensor<8x8xi1>) outs(%24 : tensor<8x8xi1>) {
    ^bb0(%in: i1, %in_25: i1, %out: i1):
      %59 = arith.andi %in, %in_25 : i1
      linalg.yield %59 : i1
    } -> tensor<8x8xi1>
    %27 = tensor.empty() : tensor<8x8xf32>
    %28 = linalg.generic {indexing_maps = [#map8, #map9, #map9, #map8], iterator_types = ["parallel", "parallel"]} ins(%26, %cst_2, %cst_3 : tensor<8x8xi1>, tensor<f32>, tensor<f32>) outs(%27 : tensor<8x8xf32>) {
    ^bb0(%in: i1, %in_25: f32, %in_26: f32, %out: f32):
      %59 = arith.select %in, %in_25, %in_26 : f32
      linalg.yield %59 : f32
    } -> tensor<8x8xf32>
    %29 = tensor.empty() : tensor<2x2x2x8x16xf32>
    %30 = linalg.generic {indexing_maps = [#map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%18 : tensor<2x2x8x16xf32>) outs(%29 : tensor<2x2x2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x2x2x8x16xf32>
    %collapsed = tensor.collapse_shape %30 [[0], [1, 2], [3], [4]] : tensor<2x2x2x8x16xf32> into tensor<2x4x8x16xf32>
    %31 = linalg.generic {indexing_maps = [#map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<2x2x8x16xf32>) outs(%29 : tensor<2x2x2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x2x2x8x16xf32>
    %32 = tensor.empty() : tensor<2x4x16x8xf32>
    %transposed = linalg.transpose ins(%collapsed : tensor<2x4x8x16xf32>) outs(%32 : tensor<2x4x16x8xf32>) permutation = [0, 1, 3, 2] 
    %33 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<2x4x16x8xf32>) outs(%32 : tensor<2x4x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %59 = arith.mulf %in, %cst_7 : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x16x8xf32>
    %collapsed_17 = tensor.collapse_shape %19 [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
    %collapsed_18 = tensor.collapse_shape %33 [[0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
    %34 = tensor.empty() : tensor<8x8x8xf32>
    %35 = linalg.fill ins(%cst : f32) outs(%34 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %36 = linalg.batch_matmul ins(%collapsed_17, %collapsed_18 : tensor<8x8x16xf32>, tensor<8x16x8xf32>) outs(%35 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %expanded_19 = tensor.expand_shape %36 [[0, 1], [2], [3]] output_shape [2, 4, 8, 8] : tensor<8x8x8xf32> into tensor<2x4x8x8xf32>
    %37 = linalg.generic {indexing_maps = [#map3, #map12, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_19, %28 : tensor<2x4x8x8xf32>, tensor<8x8xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %59 = arith.addf %in, %in_25 : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x8x8xf32>
    %38 = tensor.empty() : tensor<2x4x8xi64>
    %39 = linalg.fill ins(%c0_i64 : i64) outs(%38 : tensor<2x4x8xi64>) -> tensor<2x4x8xi64>
    %40 = tensor.empty() : tensor<2x4x8xf32>
    %41 = linalg.fill ins(%cst_0 : f32) outs(%40 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %42:2 = linalg.generic {indexing_maps = [#map3, #map13, #map13], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%37 : tensor<2x4x8x8xf32>) outs(%41, %39 : tensor<2x4x8xf32>, tensor<2x4x8xi64>) {
    ^bb0(%in: f32, %out: f32, %out_25: i64):
      %59 = linalg.index 3 : index
      %60 = arith.index_cast %59 : index to i64
      %61 = arith.maximumf %in, %out : f32
      %62 = arith.cmpf ogt, %in, %out : f32
      %63 = arith.select %62, %60, %out_25 : i64
      linalg.yield %61, %63 : f32, i64
    } -> (tensor<2x4x8xf32>, tensor<2x4x8xi64>)
    %expanded_20 = tensor.expand_shape %42#0 [[0], [1], [2, 3]] output_shape [2, 4, 8, 1] : tensor<2x4x8xf32> into tensor<2x4x8x1xf32>
    %43 = linalg.generic {indexing_maps = [#map3, #map14, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%37, %expanded_20 : tensor<2x4x8x8xf32>, tensor<2x4x8x1xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %59 = arith.subf %in, %in_25 : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x8x8xf32>
    %44 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%43 : tensor<2x4x8x8xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %59 = math.exp %in : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x8x8xf32>
    %45 = tensor.empty() : tensor<2x4x8x1xf32>
    %46 = linalg.fill ins(%cst : f32) outs(%45 : tensor<2x4x8x1xf32>) -> tensor<2x4x8x1xf32>
    %47 = linalg.generic {indexing_maps = [#map3, #map14], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%44 : tensor<2x4x8x8xf32>) outs(%46 : tensor<2x4x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %59 = arith.addf %in, %out : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x8x1xf32>
    %48 = linalg.generic {indexing_maps = [#map3, #map14, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%44, %47 : tensor<2x4x8x8xf32>, tensor<2x4x8x1xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %59 = arith.divf %in, %in_25 : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x8x8xf32>
    %49 = tensor.empty() : tensor<2x4x8x8xi1>
    %50 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%37 : tensor<2x4x8x8xf32>) outs(%49 : tensor<2x4x8x8xi1>) {
    ^bb0(%in: f32, %out: i1):
      %59 = arith.extf %in : f32 to f64
      %60 = arith.cmpf oeq, %59, %cst_5 : f64
      linalg.yield %60 : i1
    } -> tensor<2x4x8x8xi1>
    %51 = tensor.empty() : tensor<2x4x8x1xi1>
    %52 = linalg.fill ins(%true : i1) outs(%51 : tensor<2x4x8x1xi1>) -> tensor<2x4x8x1xi1>
    %53 = linalg.generic {indexing_maps = [#map3, #map14], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%50 : tensor<2x4x8x8xi1>) outs(%52 : tensor<2x4x8x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %59 = arith.andi %in, %out : i1
      linalg.yield %59 : i1
    } -> tensor<2x4x8x1xi1>
    %54 = linalg.generic {indexing_maps = [#map14, #map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%53, %cst_1, %48 : tensor<2x4x8x1xi1>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: i1, %in_25: f32, %in_26: f32, %out: f32):
      %59 = arith.select %in, %in_25, %in_26 : f32
      linalg.yield %59 : f32
    } -> tensor<2x4x8x8xf32>
    %collapsed_21 = tensor.collapse_shape %54 [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
    %collapsed_22 = tensor.collapse_shape %31 [[0, 1, 2], [3], [4]] : tensor<2x2x2x8x16xf32> into tensor<8x8x16xf32>
    %55 = tensor.empty() : tensor<8x8x16xf32>
    %56 = linalg.fill ins(%cst : f32) outs(%55 : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
    %57 = linalg.batch_matmul ins(%collapsed_21, %collapsed_22 : tensor<8x8x8xf32>, tensor<8x8x16xf32>) outs(%56 : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
    %expanded_23 = tensor.expand_shape %57 [[0, 1], [2], [3]] output_shape [2, 4, 8, 16] : tensor<8x8x16xf32> into tensor<2x4x8x16xf32>
    %58 = tensor.empty() : tensor<2x8x4x16xf32>
    %transposed_24 = linalg.transpose ins(%expanded_23 : tensor<2x4x8x16xf32>) outs(%58 : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3] 
    return %transposed_24 : tensor<2x8x4x16xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_8_torch.float32: "0x040000000000803F9BE8A13ECDCCCC3DE386013D0AD7233C383E4F3B6F12833A60CBA539"
    }
  }
#-}
