// Triton layouts and types are kept as written (nested aliases resolve and
// print again, aliases are named like Triton names them), and the helpers
// of tlx/Dialect/Encoding.h read their entries.
// RUN: triton-opt %s | FileCheck %s --check-prefix=PRINT
// RUN: triton-opt %s | triton-opt | FileCheck %s --check-prefix=PRINT
// RUN: triton-opt %s --test-tlx-encoding="keys=swizzlingByteWidth,transposed,maxPhase,order,blockM,blockN,colStride,unpacked,dim,CGALayout" -o /dev/null 2>&1 | FileCheck %s --check-prefix=READ

// PRINT: #[[BLOCKED:blocked]] = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
// PRINT: #[[LINEAR:linear]] = #ttg.linear<{register = {{\[\[}}0, 1]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = {{\[\[}}32, 0], [64, 0]], block = []}>
// PRINT: #[[MMA:mma]] = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
// PRINT: #[[MMA1:mma1]] = #ttg.amd_wmma<{version = 2, isTranspose = false, ctaLayout = {warp = {{\[\[}}0, 1], [1, 0]]}}>
// PRINT: #[[PADDED:shared]] = #ttg.padded_shared<[32:+4] {order = [1, 0], shape = [64, 64]}>
// PRINT: #[[NVMMA:shared1]] = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, CGALayout = {{\[\[}}0, 1]]}>
// PRINT: #[[SWIZZLED:shared2]] = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>
// PRINT: #smem = #ttg.shared_memory
// PRINT: #[[TMEM:tmem]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 2>
// PRINT: #[[OLD:tmem1]] = #ttng.tensor_memory_encoding<blockM = 64, blockN = 32, unpacked = true>
// PRINT: #[[SCALES:tmem_scales]] = #ttng.tensor_memory_scales_encoding<>
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, CGALayout = [[0, 1]]}>
#swizzled = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 2>
#old_tmem = #ttng.tensor_memory_encoding<blockM = 64, blockN = 32, unpacked = true>
module attributes {test.parse_encoding = [
    "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>",
    "#ttng.tensor_memory_encoding<blockM = 128, blockN = 256, colStride = 1>",
    "#ttg.swizzled_shared<{vec = "]} {
  // PRINT-LABEL: tt.func @layouts
  // PRINT-SAME: !ttg.memdesc<64x64xf16, #[[PADDED]], #smem, mutable>
  // PRINT-SAME: !ttg.memdesc<2x64x64xf16, #[[NVMMA]], #smem, mutable>
  // PRINT-SAME: !ttg.memdesc<64x64xf32, #[[SWIZZLED]], #smem>
  // PRINT-SAME: !ttg.memdesc<128x64xf16, #[[TMEM]], #ttng.tensor_memory>
  // PRINT-SAME: !ttg.memdesc<64x32xf16, #[[OLD]], #ttng.tensor_memory>
  // PRINT-SAME: !ttg.memdesc<128x4xi8, #[[SCALES]], #ttng.tensor_memory>
  // PRINT-SAME: tensor<64xf32, #ttg.slice<{dim = 1, parent = #[[BLOCKED]]}>>
  // PRINT-SAME: tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 2}>>
  // PRINT-SAME: tensor<64x64xf16, #[[MMA1]]>
  // PRINT-SAME: tensor<2x1xf16, #[[LINEAR]]>
  // PRINT-SAME: tensor<128x!tt.ptr<f32>, #[[BLOCKED]]>
  // PRINT-SAME: !tt.ptr<!tt.ptr<i8, 3>>
  // PRINT-SAME: !tt.tensordesc<tensor<64x64xf16, #[[NVMMA]]>>
  // PRINT-SAME: tensor<4xf8E4M3FN, #ttg.future<"text", 1.5, -2, -3.25e-01, @symbol, dense<[1, 2]> : tensor<2xi32>, affine_map<(d0) -> (d0 + 1)>, i32, 0x1F, [?, *, |], ...>>
  // PRINT-SAME: !ttg.async.token
  // PRINT-SAME: !ttng.future<{x = !tt.ptr<i8>, y = #[[BLOCKED]]}>
  // READ: remark: layout 'padded_shared' swizzlingByteWidth=none transposed=none maxPhase=none order=[1, 0] blockM=none blockN=none colStride=none unpacked=none dim=none
  // READ: remark: layout 'nvmma_shared' swizzlingByteWidth=128 transposed=false maxPhase=none order=none blockM=none blockN=none colStride=none unpacked=none dim=none CGALayout={{\[\[}}0, 1]]
  // READ: remark: layout 'swizzled_shared' swizzlingByteWidth=none transposed=none maxPhase=4 order=[1, 0] blockM=none blockN=none colStride=none unpacked=none dim=none
  // READ: remark: layout 'tensor_memory_encoding' swizzlingByteWidth=none transposed=none maxPhase=none order=none blockM=128 blockN=64 colStride=2 unpacked=none dim=none CGALayout=none
  // READ: remark: layout 'tensor_memory_encoding' swizzlingByteWidth=none transposed=none maxPhase=none order=none blockM=64 blockN=32 colStride=none unpacked=true dim=none
  // READ: remark: layout 'tensor_memory_scales_encoding' swizzlingByteWidth=none
  // Entries of the nested parent layout are not read.
  // READ: remark: layout 'slice' swizzlingByteWidth=none transposed=none maxPhase=none order=none blockM=none blockN=none colStride=none unpacked=none dim=1
  // READ: remark: layout 'dot_op'
  // READ: remark: layout 'amd_wmma'
  // READ: remark: layout 'linear'
  // READ: remark: layout 'blocked' swizzlingByteWidth=none transposed=none maxPhase=none order=[1, 0]
  // READ: remark: layout 'future'
  tt.func @layouts(
      %padded: !ttg.memdesc<64x64xf16, #ttg.padded_shared<[32:+4] {order = [1, 0], shape = [64, 64]}>, #ttg.shared_memory, mutable>,
      %nvmma: !ttg.memdesc<2x64x64xf16, #nvmma, #ttg.shared_memory, mutable>,
      %swizzled: !ttg.memdesc<64x64xf32, #swizzled, #ttg.shared_memory>,
      %tmem: !ttg.memdesc<128x64xf16, #tmem, #ttng.tensor_memory>,
      %old_tmem: !ttg.memdesc<64x32xf16, #old_tmem, #ttng.tensor_memory>,
      %scales: !ttg.memdesc<128x4xi8, #ttng.tensor_memory_scales_encoding<>, #ttng.tensor_memory>,
      %slice: tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>>,
      %dot: tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>, kWidth = 2}>>,
      %wmma: tensor<64x64xf16, #ttg.amd_wmma<{version = 2, isTranspose = false, ctaLayout = {warp = [[0, 1], [1, 0]]}}>>,
      %linear: tensor<2x1xf16, #ttg.linear<{register = [[0, 1]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [[32, 0], [64, 0]], block = []}>>,
      %pointers: tensor<128x!tt.ptr<f32>, #blocked>,
      %nested_pointer: !tt.ptr<!tt.ptr<i8, 3>>,
      %descriptor: !tt.tensordesc<tensor<64x64xf16, #nvmma>>,
      %future: tensor<4xf8E4M3FN, #ttg.future<"text", 1.5, -2, -3.25e-01, @symbol, dense<[1, 2]> : tensor<2xi32>, affine_map<(d0) -> (d0 + 1)>, i32, 0x1F, [?, *, |], ...>>,
      %token: !ttg.async.token,
      %future_type: !ttng.future<{x = !tt.ptr<i8>, y = #blocked}>) {
    tt.return
  }
}
// READ: remark: parsed 'swizzled_shared': #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
// READ: remark: parsed 'tensor_memory_encoding': #ttng.tensor_memory_encoding<blockM = 128, blockN = 256, colStride = 1>
// READ: error: unbalanced '{' character in pretty dialect name
// READ: remark: does not parse: #ttg.swizzled_shared<{vec = 
