#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
module {
  func.func @main(%arg0: tensor<64x32x1x128xf32>, %arg1: tensor<64x1xi64>) -> tensor<64x32x1x128xf32> {
    %cst = arith.constant dense_resource<torch_tensor_64_torch.float32> : tensor<64xf32>
    %expanded = tensor.expand_shape %arg1 [[0], [1, 2]] output_shape [64, 1, 1] : tensor<64x1xi64> into tensor<64x1x1xi64>
    %0 = tensor.empty() : tensor<64x1x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<64x1x1xi64>) outs(%0 : tensor<64x1x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %13 = arith.sitofp %in : i64 to f32
      linalg.yield %13 : f32
    } -> tensor<64x1x1xf32>
    %2 = tensor.empty() : tensor<64x1x64xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %cst : tensor<64x1x1xf32>, tensor<64xf32>) outs(%2 : tensor<64x1x64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %13 = arith.mulf %in, %in_4 : f32
      linalg.yield %13 : f32
    } -> tensor<64x1x64xf32>
    %concat = tensor.concat dim(2) %3, %3 : (tensor<64x1x64xf32>, tensor<64x1x64xf32>) -> tensor<64x1x128xf32>
    %4 = tensor.empty() : tensor<64x1x128xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<64x1x128xf32>) outs(%4 : tensor<64x1x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = math.cos %in : f32
      linalg.yield %13 : f32
    } -> tensor<64x1x128xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<64x1x128xf32>) outs(%4 : tensor<64x1x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = math.sin %in : f32
      linalg.yield %13 : f32
    } -> tensor<64x1x128xf32>
    %expanded_0 = tensor.expand_shape %5 [[0], [1, 2], [3]] output_shape [64, 1, 1, 128] : tensor<64x1x128xf32> into tensor<64x1x1x128xf32>
    %expanded_1 = tensor.expand_shape %6 [[0], [1, 2], [3]] output_shape [64, 1, 1, 128] : tensor<64x1x128xf32> into tensor<64x1x1x128xf32>
    %7 = tensor.empty() : tensor<64x32x1x128xf32>
    %8 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %expanded_0 : tensor<64x32x1x128xf32>, tensor<64x1x1x128xf32>) outs(%7 : tensor<64x32x1x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %13 = arith.mulf %in, %in_4 : f32
      linalg.yield %13 : f32
    } -> tensor<64x32x1x128xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [64, 32, 1, 64] [1, 1, 1, 1] : tensor<64x32x1x128xf32> to tensor<64x32x1x64xf32>
    %extracted_slice_2 = tensor.extract_slice %arg0[0, 0, 0, 64] [64, 32, 1, 64] [1, 1, 1, 1] : tensor<64x32x1x128xf32> to tensor<64x32x1x64xf32>
    %9 = tensor.empty() : tensor<64x32x1x64xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_2 : tensor<64x32x1x64xf32>) outs(%9 : tensor<64x32x1x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = arith.negf %in : f32
      linalg.yield %13 : f32
    } -> tensor<64x32x1x64xf32>
    %concat_3 = tensor.concat dim(3) %10, %extracted_slice : (tensor<64x32x1x64xf32>, tensor<64x32x1x64xf32>) -> tensor<64x32x1x128xf32>
    %11 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_3, %expanded_1 : tensor<64x32x1x128xf32>, tensor<64x1x1x128xf32>) outs(%7 : tensor<64x32x1x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %13 = arith.mulf %in, %in_4 : f32
      linalg.yield %13 : f32
    } -> tensor<64x32x1x128xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8, %11 : tensor<64x32x1x128xf32>, tensor<64x32x1x128xf32>) outs(%7 : tensor<64x32x1x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %13 = arith.addf %in, %in_4 : f32
      linalg.yield %13 : f32
    } -> tensor<64x32x1x128xf32>
    return %12 : tensor<64x32x1x128xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_64_torch.float32: "0x040000000000803FD7AF5D3F11F93F3FE03D263F9AF50F3FCF53F93E9BE8D73E1BF8BA3E9BE8A13E04358C3E23D4723EED47523E8718363E40B01D3E778D083ED67FEC3DCDCCCC3D7859B13D0D94993D4DFE843DC255663D3F76473D15BA2C3D4893153DE386013DD254E03C4F43C23C8B39A83C39AD913C334D7C3CF27B5A3C11333D3C0AD7233C2DE10D3CB0B9F53B15CAD43B9C44B83BCC919F3B772E8A3B0E526F3B383E4F3B0F77333B0D691B3B6F94063B2815E93A5CD7C93A8EC9AE3A0E5C973A6F12833AE201633A8C94443A443B2A3A166A133AAC4FFF392517DD39D774BF3960CBA53972928F3915A87839E453573953773A391679213972D40B39E22CF238"
    }
  }
#-}
