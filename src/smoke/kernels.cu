// The smoke test's device code. src/smoke/kernels.ptx is generated from this
// file by src/smoke/gen-ptx.py (NVRTC, compute_50); the PTX is what ships.
// Keep every kernel extern "C" so its PTX name is the name below.

// A 32-bit mixer (the "lowbias32" finaliser) over the word index, so
// every word of a chunk gets a different value and aliased addresses show.
__device__ __forceinline__ unsigned int gd_pattern(unsigned long long i, unsigned int seed)
{
    unsigned int x = (unsigned int)i ^ ((unsigned int)(i >> 32) * 0x9E3779B9u) ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// C = A * B for row-major n x n matrices, 16 x 16 tiles in shared memory.
// Launch with blockDim (16, 16) and gridDim (ceil(n/16), ceil(n/16)).
extern "C" __global__ void gd_matmul_f32(const float *a, const float *b, float *c, unsigned int n)
{
    __shared__ float ta[16][16];
    __shared__ float tb[16][16];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    unsigned int row = blockIdx.y * 16 + ty;
    unsigned int col = blockIdx.x * 16 + tx;
    float acc = 0.0f;
    for (unsigned int t = 0; t < n; t += 16) {
        ta[ty][tx] = (row < n && t + tx < n) ? a[(unsigned long long)row * n + t + tx] : 0.0f;
        tb[ty][tx] = (col < n && t + ty < n) ? b[(unsigned long long)(t + ty) * n + col] : 0.0f;
        __syncthreads();
        for (unsigned int k = 0; k < 16; ++k)
            acc = fmaf(ta[ty][k], tb[k][tx], acc);
        __syncthreads();
    }
    if (row < n && col < n)
        c[(unsigned long long)row * n + col] = acc;
}

// p[i] = pattern(i) (or its complement), grid-stride over `words` 32-bit words.
extern "C" __global__ void gd_fill_u32(unsigned int *p, unsigned long long words, unsigned int seed, unsigned int invert)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        unsigned int v = gd_pattern(i, seed);
        p[i] = invert ? ~v : v;
    }
}

// Counts the words that differ from what gd_fill_u32 wrote into *mismatches.
extern "C" __global__ void gd_verify_u32(const unsigned int *p, unsigned long long words, unsigned int seed, unsigned int invert, unsigned long long *mismatches)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long bad = 0;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        unsigned int v = gd_pattern(i, seed);
        if (p[i] != (invert ? ~v : v))
            ++bad;
    }
    if (bad)
        atomicAdd(mismatches, bad);
}
