#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map3 = affine_map<(d0, d1, d2) -> (d2)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
#map7 = affine_map<() -> ()>
module @jit_append {
  func.func public @main(%arg0: tensor<2x3x2x32xf32>, %arg1: tensor<2x3xi32>, %arg2: tensor<2x16x2x32xf32>, %arg3: tensor<i32>) -> tensor<2x16x2x32xf32> {
    %c16 = arith.constant 16 : index
    %c13 = arith.constant 13 : index
    %c16_i32 = arith.constant 16 : i32
    %c0_i32 = arith.constant 0 : i32
    %c0 = arith.constant 0 : index
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+04 : f32
    %cst_1 = arith.constant 3.200000e+01 : f32
    %cst_2 = arith.constant 0.000000e+00 : f32
    %cst_3 = arith.constant 2.000000e+00 : f32
    %0 = tensor.empty() : tensor<16xf32>
    %1 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%0 : tensor<16xf32>) {
    ^bb0(%out: f32):
      %49 = linalg.index 0 : index
      %50 = arith.index_cast %49 : index to i32
      %51 = arith.sitofp %50 : i32 to f32
      linalg.yield %51 : f32
    } -> tensor<16xf32>
    %2 = tensor.empty() : tensor<16xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%1 : tensor<16xf32>) outs(%2 : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %49 = arith.mulf %in, %cst_3 : f32
      linalg.yield %49 : f32
    } -> tensor<16xf32>
    %4 = tensor.empty() : tensor<16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%3 : tensor<16xf32>) outs(%4 : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %49 = arith.addf %in, %cst_2 : f32
      linalg.yield %49 : f32
    } -> tensor<16xf32>
    %6 = tensor.empty() : tensor<16xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%5 : tensor<16xf32>) outs(%6 : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %49 = arith.divf %in, %cst_1 : f32
      linalg.yield %49 : f32
    } -> tensor<16xf32>
    %8 = tensor.empty() : tensor<16xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%7 : tensor<16xf32>) outs(%8 : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %49 = math.powf %cst_0, %in : f32
      linalg.yield %49 : f32
    } -> tensor<16xf32>
    %10 = tensor.empty() : tensor<16xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%9 : tensor<16xf32>) outs(%10 : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %49 = arith.divf %cst, %in : f32
      linalg.yield %49 : f32
    } -> tensor<16xf32>
    %expanded = tensor.expand_shape %arg1 [[0], [1, 2]] output_shape [2, 3, 1] : tensor<2x3xi32> into tensor<2x3x1xi32>
    %12 = tensor.empty() : tensor<2x3x1xf32>
    %13 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x3x1xi32>) outs(%12 : tensor<2x3x1xf32>) {
    ^bb0(%in: i32, %out: f32):
      %49 = arith.sitofp %in : i32 to f32
      linalg.yield %49 : f32
    } -> tensor<2x3x1xf32>
    %14 = tensor.empty() : tensor<2x3x16xf32>
    %15 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%13 : tensor<2x3x1xf32>) outs(%14 : tensor<2x3x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x3x16xf32>
    %16 = tensor.empty() : tensor<2x3x16xf32>
    %17 = linalg.generic {indexing_maps = [#map3, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%11 : tensor<16xf32>) outs(%16 : tensor<2x3x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x3x16xf32>
    %18 = tensor.empty() : tensor<2x3x16xf32>
    %19 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15, %17 : tensor<2x3x16xf32>, tensor<2x3x16xf32>) outs(%18 : tensor<2x3x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %49 = arith.mulf %in, %in_9 : f32
      linalg.yield %49 : f32
    } -> tensor<2x3x16xf32>
    %20 = tensor.empty() : tensor<2x3x32xf32>
    %inserted_slice = tensor.insert_slice %19 into %20[0, 0, 0] [2, 3, 16] [1, 1, 1] : tensor<2x3x16xf32> into tensor<2x3x32xf32>
    %inserted_slice_4 = tensor.insert_slice %19 into %inserted_slice[0, 0, %c16] [2, 3, 16] [1, 1, 1] : tensor<2x3x16xf32> into tensor<2x3x32xf32>
    %21 = tensor.empty() : tensor<2x3x1x32xf32>
    %22 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%inserted_slice_4 : tensor<2x3x32xf32>) outs(%21 : tensor<2x3x1x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x3x1x32xf32>
    %23 = tensor.empty() : tensor<2x3x1x32xf32>
    %24 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%22 : tensor<2x3x1x32xf32>) outs(%23 : tensor<2x3x1x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %49 = math.cos %in : f32
      linalg.yield %49 : f32
    } -> tensor<2x3x1x32xf32>
    %25 = tensor.empty() : tensor<2x3x2x32xf32>
    %26 = linalg.generic {indexing_maps = [#map6, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%24 : tensor<2x3x1x32xf32>) outs(%25 : tensor<2x3x2x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x3x2x32xf32>
    %27 = tensor.empty() : tensor<2x3x2x32xf32>
    %28 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %26 : tensor<2x3x2x32xf32>, tensor<2x3x2x32xf32>) outs(%27 : tensor<2x3x2x32xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %49 = arith.mulf %in, %in_9 : f32
      linalg.yield %49 : f32
    } -> tensor<2x3x2x32xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 3, 2, 16] [1, 1, 1, 1] : tensor<2x3x2x32xf32> to tensor<2x3x2x16xf32>
    %extracted_slice_5 = tensor.extract_slice %arg0[0, 0, 0, 16] [2, 3, 2, 16] [1, 1, 1, 1] : tensor<2x3x2x32xf32> to tensor<2x3x2x16xf32>
    %29 = tensor.empty() : tensor<2x3x2x16xf32>
    %30 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_5 : tensor<2x3x2x16xf32>) outs(%29 : tensor<2x3x2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %49 = arith.negf %in : f32
      linalg.yield %49 : f32
    } -> tensor<2x3x2x16xf32>
    %31 = tensor.empty() : tensor<2x3x2x32xf32>
    %inserted_slice_6 = tensor.insert_slice %30 into %31[0, 0, 0, 0] [2, 3, 2, 16] [1, 1, 1, 1] : tensor<2x3x2x16xf32> into tensor<2x3x2x32xf32>
    %inserted_slice_7 = tensor.insert_slice %extracted_slice into %inserted_slice_6[0, 0, 0, %c16] [2, 3, 2, 16] [1, 1, 1, 1] : tensor<2x3x2x16xf32> into tensor<2x3x2x32xf32>
    %32 = tensor.empty() : tensor<2x3x1x32xf32>
    %33 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%22 : tensor<2x3x1x32xf32>) outs(%32 : tensor<2x3x1x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %49 = math.sin %in : f32
      linalg.yield %49 : f32
    } -> tensor<2x3x1x32xf32>
    %34 = tensor.empty() : tensor<2x3x2x32xf32>
    %35 = linalg.generic {indexing_maps = [#map6, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%33 : tensor<2x3x1x32xf32>) outs(%34 : tensor<2x3x2x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x3x2x32xf32>
    %36 = tensor.empty() : tensor<2x3x2x32xf32>
    %37 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%inserted_slice_7, %35 : tensor<2x3x2x32xf32>, tensor<2x3x2x32xf32>) outs(%36 : tensor<2x3x2x32xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %49 = arith.mulf %in, %in_9 : f32
      linalg.yield %49 : f32
    } -> tensor<2x3x2x32xf32>
    %38 = tensor.empty() : tensor<2x3x2x32xf32>
    %39 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%28, %37 : tensor<2x3x2x32xf32>, tensor<2x3x2x32xf32>) outs(%38 : tensor<2x3x2x32xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %49 = arith.addf %in, %in_9 : f32
      linalg.yield %49 : f32
    } -> tensor<2x3x2x32xf32>
    %40 = tensor.empty() : tensor<i1>
    %41 = linalg.generic {indexing_maps = [#map7, #map7], iterator_types = []} ins(%arg3 : tensor<i32>) outs(%40 : tensor<i1>) {
    ^bb0(%in: i32, %out: i1):
      %49 = arith.cmpi slt, %in, %c0_i32 : i32
      linalg.yield %49 : i1
    } -> tensor<i1>
    %42 = tensor.empty() : tensor<i32>
    %43 = linalg.generic {indexing_maps = [#map7, #map7], iterator_types = []} ins(%arg3 : tensor<i32>) outs(%42 : tensor<i32>) {
    ^bb0(%in: i32, %out: i32):
      %49 = arith.addi %in, %c16_i32 : i32
      linalg.yield %49 : i32
    } -> tensor<i32>
    %44 = tensor.empty() : tensor<i32>
    %45 = linalg.generic {indexing_maps = [#map7, #map7, #map7, #map7], iterator_types = []} ins(%41, %43, %arg3 : tensor<i1>, tensor<i32>, tensor<i32>) outs(%44 : tensor<i32>) {
    ^bb0(%in: i1, %in_9: i32, %in_10: i32, %out: i32):
      %49 = arith.select %in, %in_9, %in_10 : i32
      linalg.yield %49 : i32
    } -> tensor<i32>
    %extracted = tensor.extract %45[] : tensor<i32>
    %46 = arith.index_cast %extracted : i32 to index
    %47 = arith.maxsi %46, %c0 : index
    %48 = arith.minsi %47, %c13 : index
    %inserted_slice_8 = tensor.insert_slice %39 into %arg2[%c0, %48, %c0, %c0] [2, 3, 2, 32] [1, 1, 1, 1] : tensor<2x3x2x32xf32> into tensor<2x16x2x32xf32>
    return %inserted_slice_8 : tensor<2x16x2x32xf32>
  }
}

