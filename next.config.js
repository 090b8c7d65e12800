/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // `npm test` type-checks the whole repo with tsc; the build need not do it again.
  typescript: { ignoreBuildErrors: true },
};

export default nextConfig;
