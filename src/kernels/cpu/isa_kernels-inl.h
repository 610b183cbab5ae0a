// The entry points of one ISA's optimized CPU kernels: textually included by isa_kernels.h inside
// each ISA namespace (no include guard, like matmul_tiling-inl.h), so that every ISA declares the
// same set once. Declared by the table's function types (kernel_table.h), so a signature cannot
// drift from the slot it fills. Defined by that ISA's matmul_<isa>.cc (MatMul*),
// quant_matmul_<isa>.cc (QuantMatMul*, quant_matmul-inl.h), quantize_activations_<isa>.cc,
// vector_ops_<isa>.cc and gemm_<isa>.cc (Gemm, and DeltaStep: delta_step-inl.h on the same
// vectors).

std::remove_pointer_t<MatMulFn> MatMulF32, MatMulBF16, MatMulF16;
std::remove_pointer_t<QuantMatMulFn> QuantMatMulQ8_0, QuantMatMulQ4_K, QuantMatMulQ6_K;
std::remove_pointer_t<QuantizeActivationsFn> QuantizeActivations;
std::remove_pointer_t<DotFn> Dot;
std::remove_pointer_t<AxpyFn> Axpy;
std::remove_pointer_t<ScaleFn> Scale;
std::remove_pointer_t<DeltaStepFn> DeltaStep;
std::remove_pointer_t<GemmFn> Gemm;
