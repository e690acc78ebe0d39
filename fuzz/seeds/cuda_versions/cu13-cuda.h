/**
 * CUDA API version number
 */
#define CUDA_VERSION 13020

#ifdef __cplusplus
extern "C" {
