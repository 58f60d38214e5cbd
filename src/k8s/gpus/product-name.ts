// GFD names a product as NVML does with its spaces replaced by dashes (`NVIDIA-H100-80GB-HBM3`);
// NVIDIA's DRA driver publishes NVML's name itself (`NVIDIA H100 80GB HBM3`). Both are read in GFD's
// form, so that one GPU is one `gpu_model` however it was handed out.

/** A product name in GFD's form; null when empty. */
export function gfdProductName(name: string | null | undefined): string | null {
  if (name === null || name === undefined) return null;
  const product = name.trim().replace(/\s+/g, '-');
  return product === '' ? null : product;
}
