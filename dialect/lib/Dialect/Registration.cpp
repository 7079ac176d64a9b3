//===- Registration.cpp - The dialects triton-opt understands -------------===//

#include "tlx/Dialect/Registration.h"
#include "tlx/Dialect/TLX/Dialect.h"
#include "tlx/Dialect/Triton/Dialect.h"
#include "tlx/Dialect/TritonGPU/Dialect.h"
#include "tlx/Dialect/TritonNvidiaGPU/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"

void mlir::tlx::registerDialects(DialectRegistry &registry) {
  registry
      .insert<TLXDialect, triton::TritonDialect, triton::gpu::TritonGPUDialect,
              triton::nvidia_gpu::TritonNvidiaGPUDialect, arith::ArithDialect,
              cf::ControlFlowDialect, func::FuncDialect, gpu::GPUDialect,
              math::MathDialect, scf::SCFDialect, ub::UBDialect>();
}
