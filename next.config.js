/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Type errors fail `npm run build` here; `npm test` does not type-check again (docs/TESTING.md#what-npm-test-runs).
  typescript: { tsconfigPath: "tsconfig.json" },
};

export default nextConfig;
